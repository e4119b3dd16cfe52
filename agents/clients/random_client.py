"""A reference exec: client (docs/PROTOCOL.md): a random legal move, seeded by each hand's seed.

Run it as ``exec:python agents/clients/random_client.py`` or, installed,
``exec:python -m ginenv.agents.clients.random_client``. Standard library only, so it can be copied
anywhere as the start of a client.
"""

import json
import random
import sys


def main() -> None:
    """Answer every act message with a random legal action until the end message."""
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hand":
            rng.seed(message["seed"])  # same seed, same moves: games are reproducible
        elif message["type"] == "act":
            print(rng.choice(message["legal"]), flush=True)  # stdout is the protocol channel
        elif message["type"] == "end":
            break  # other types: ignore, for clients to keep working with newer versions


if __name__ == "__main__":
    main()
