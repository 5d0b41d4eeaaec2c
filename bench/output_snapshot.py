"""Hash the command line's output on every sample, corpus module and benchmark step, to prove
that a performance change changes no output byte.

For each file it runs, in a fresh process, ``hloidx maps FILE --format json``, ``hloidx maps
FILE`` (text to a pipe) and ``hloidx summary FILE --format json``, and records the exit code
and the SHA-256 of standard output and standard error. The steps of ``bench/data`` are
decompressed to a temporary directory first. Run it before and after a change and compare:

    python bench/output_snapshot.py /tmp/before.txt
    ... change ...
    python bench/output_snapshot.py /tmp/after.txt --compare /tmp/before.txt

``--tree DIR`` runs the hloidx of another checkout (``git worktree add /tmp/base HEAD~3``);
``--skip-steps`` leaves out the large steps (a minute or more each).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "maps-json": ["maps", "{file}", "--format", "json"],
    "maps-text": ["maps", "{file}"],
    "summary-json": ["summary", "{file}", "--format", "json"],
}


def small_files() -> list[Path]:
    found = [*ROOT.glob("samples/**/*.hlo"), *ROOT.glob("samples/**/*.mlir")]
    found += ROOT.glob("tests/data/corpus/**/*.hlo")
    return sorted(found)


def run(tree: Path, args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "HLOIDX_WIDTH": "100"}
    done = subprocess.run(
        # -P: the working directory (a checkout, for the samples) must not shadow --tree
        [sys.executable, "-P", "-m", "hloidx", *args],
        capture_output=True,
        env=env,
        cwd=cwd,
        check=False,
    )
    digest = hashlib.sha256
    return done.returncode, digest(done.stdout).hexdigest(), digest(done.stderr).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--compare", type=Path, help="an earlier snapshot to compare with")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--skip-steps", action="store_true")
    options = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        # files are named relative to the directory the command runs in: the output names them
        files = [(ROOT, n, n) for n in (f.relative_to(ROOT).as_posix() for f in small_files())]
        if not options.skip_steps:
            for gz in sorted(ROOT.glob("bench/data/*.hlo.gz")):
                plain = Path(tmp) / gz.name.removesuffix(".gz")
                plain.write_bytes(gzip.decompress(gz.read_bytes()))
                files.append((Path(tmp), plain.name, gz.relative_to(ROOT).as_posix()))
        for cwd, path, name in files:
            for label, template in COMMANDS.items():
                args = [path if a == "{file}" else a for a in template]
                code, out, err = run(options.tree, args, cwd)
                line = f"{label} {name} exit={code} stdout={out} stderr={err}"
                lines.append(line)
                print(line, flush=True)
    options.output.write_text("\n".join(lines) + "\n")
    if options.compare is not None:
        before = options.compare.read_text().splitlines()
        changed = sorted(set(lines) ^ set(before))
        print(f"{len(changed)} lines differ" if changed else "identical")
        for line in changed:
            print(("now   " if line in lines else "before ") + line)
        sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
