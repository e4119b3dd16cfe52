"""A run's folder: ``config.json`` (the run's key) and ``results.jsonl`` (one line a finished unit).

Opening a folder for a config refuses one that holds a run of other settings, of other networks or
on other deals (secret deals of another key, or the seed's public deals), and returns the units
already finished, so that a run started again resumes where it stopped (a
line torn by a kill is dropped and its unit played again).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.experiments.eval.eval_config import EvalConfig, HarnessError

from ginenv.secret_deals import DealKey


@dataclass
class RunFolder:
    """A run's folder: ``config.json`` (the fingerprint) and ``results.jsonl`` (one line a unit).

    Neither ever holds a deal key (an agent could read the folder while the run goes on); the key
    is written at the end only, by :func:`disclose_key`."""

    path: Path
    #: sha256 of each ``checkpoint:PATH`` agent's file, read by :meth:`open` (the run's key).
    checkpoints: dict[str, str] = field(default_factory=dict)

    @property
    def results_path(self) -> Path:
        """Where finished units are appended."""
        return self.path / "results.jsonl"

    def open(self, cfg: EvalConfig) -> dict[tuple[str, str, int], dict[str, Any]]:
        """Create or reopen the folder for ``cfg``; returns the units already finished.

        A path that is a file, or a folder that cannot be written, raises HarnessError before any
        game is played.
        """
        if self.path.exists() and not self.path.is_dir():
            raise HarnessError(f"--out {self.path} is a file, not a folder; choose a folder for the run")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise HarnessError(f"cannot create the run folder {self.path}: {err.strerror or err}") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise HarnessError(f"the run folder {self.path} is not writable; choose another --out")
        meta = self.path / "config.json"
        hashes = cfg.checkpoints()
        self.checkpoints = hashes
        fingerprint = cfg.fingerprint(hashes)
        if meta.exists():
            try:
                stored = json.loads(meta.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                raise HarnessError(
                    f"{meta} is corrupt; delete the run folder or pick another --out"
                ) from None
            if not isinstance(stored, dict):
                raise HarnessError(f"{meta} is corrupt; delete the run folder or pick another --out")
            if stored.get("fingerprint") != fingerprint:
                _refuse_other_deals(self.path, stored, cfg)
                changed = [
                    name
                    for name, digest in hashes.items()
                    if name in (stored.get("checkpoints") or {}) and stored["checkpoints"][name] != digest
                ]
                if changed and stored.get("config") == cfg.to_dict():
                    raise HarnessError(
                        f"{self.path} holds a run of other networks: {', '.join(changed)} changed since "
                        "the run began (its file's content differs); choose another --out"
                    )
                raise HarnessError(
                    f"{self.path} holds a run with other settings ({stored.get('config')}); "
                    "resume with the same arguments, or choose another --out"
                )
        else:
            doc = {"fingerprint": fingerprint, "config": cfg.to_dict(), "checkpoints": hashes}
            try:
                meta.write_text(json.dumps(doc, indent=1))
            except OSError as err:
                raise HarnessError(
                    f"cannot write {meta}: {err.strerror or err}; choose another --out"
                ) from None
        return self._read_done()

    def _read_done(self) -> dict[tuple[str, str, int], dict[str, Any]]:
        done: dict[tuple[str, str, int], dict[str, Any]] = {}
        path = self.results_path
        if not path.exists():
            return done
        raw = path.read_bytes()
        good_upto = 0
        for line in raw.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # torn write from a kill: dropped, the unit is replayed
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break
            done[(rec["a"], rec["b"], rec["deal"])] = rec
            good_upto += len(line)
        if good_upto != len(raw):
            with path.open("r+b") as fh:
                fh.truncate(good_upto)
        return done

    def append(self, record: dict[str, Any]) -> None:
        """Append one finished unit durably."""
        with self.results_path.open("a") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def _refuse_other_deals(path: Path, stored: dict[str, Any], cfg: EvalConfig) -> None:
    """Refuse, in words, a folder whose deals are not ``cfg``'s: secret against public, or another
    key. The folder holds the commitment only, so a secret run resumes with its key given back."""
    config = stored.get("config")
    theirs = config.get("deal_commitment") if isinstance(config, dict) else None
    ours = cfg.commitment
    if theirs == ours:
        return
    if ours is None:
        raise HarnessError(
            f"{path} holds a run on secret deals (commitment {theirs}); resume it with --key and the "
            "key that run printed, or choose another --out"
        )
    if theirs is None:
        raise HarnessError(f"{path} holds a run on the seed's public deals; secret deals need another --out")
    raise HarnessError(
        f"the deal key does not match the commitment of the run in {path} ({theirs}); give the key "
        "that run printed, or choose another --out"
    )


#: The file of a finished secret run that discloses its key (:func:`disclose_key`).
KEY_FILE = "deal_key.json"


def disclose_key(path: str | Path, key: DealKey) -> Path:
    """Write ``key`` and its commitment to ``path/deal_key.json``, once the run has ended: from then
    on anyone holding the folder can check the commitment and replay every deal."""
    target = Path(path) / KEY_FILE
    doc = {
        "deal_key": key.hex(),
        "deal_commitment": key.commitment(),
        "check": "ginenv.secret_deals.check_commitment(deal_key, deal_commitment); replay with --key",
    }
    target.write_text(json.dumps(doc, indent=1) + "\n")
    return target
