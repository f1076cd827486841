#!/usr/bin/env python3
"""Regenerates the command outputs pasted in README.md, so the tour shows what napkin really prints.

Each README block that starts with a line '$ napkin ...' inside a ```console fence is re-run with
the built binary (default build/src/napkin) and its output replaced. Usage:
    python3 docs/readme-tour.py [--untimed] [path/to/napkin]
--untimed leaves the blocks that time this machine (bench, calibrate without --dry-run) as they
are, so a busy machine's timings do not replace a quiet one's.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
args = [a for a in sys.argv[1:] if a != "--untimed"]
untimed = "--untimed" in sys.argv[1:]
binary = args[0] if args else str(root / "build/src/napkin")
readme = root / "README.md"
text = readme.read_text()


def rerun(match: re.Match) -> str:
    command = match.group(1)
    args = shlex.split(command)[1:]
    timed = args[0] == "bench" or (args[0] == "calibrate" and "--dry-run" not in args)
    if untimed and timed:
        return match.group(0)
    # As tests/test_docs.cpp runs them: into a pipe, no COLUMNS (no wrapping), only the shipped specs.
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NAPKIN_SPEC_PATH")}
    out = subprocess.run([binary, *args], capture_output=True, text=True, cwd=root, env=env)
    body = (out.stderr + out.stdout).rstrip("\n")  # warnings come first, as on a terminal
    return f"```console\n$ {command}\n{body}\n```"


text = re.sub(r"```console\n\$ (napkin[^\n]*)\n.*?```", rerun, text, flags=re.S)
readme.write_text(text)
