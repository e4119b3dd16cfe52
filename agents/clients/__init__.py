"""Reference clients of the exec: protocol (docs/PROTOCOL.md), in Python and in Node.js."""
