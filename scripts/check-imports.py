#!/usr/bin/env python3
"""Fails when a target imports a module of this package that Package.swift
does not declare as one of its dependencies.

SwiftPM resolves such an import through a neighbour's dependencies, so it
compiles, and nothing would stop an upward edge between the layers: this
check keeps the layers what the manifest says they are. (SwiftPM's own
--explicit-target-dependency-import-check does not report these with the
toolchain's native build system.)

    python3 scripts/check-imports.py     # run by scripts/test.sh
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
IMPORT = re.compile(r"^\s*(?:@testable\s+)?(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(\w+)")


def main():
    manifest = json.loads(
        subprocess.run(
            ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    )
    targets = {t["name"]: t for t in manifest["targets"]}
    problems = []
    for name, target in targets.items():
        declared = {next(iter(d.values()))[0] for d in target.get("dependencies", [])}
        folder = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name
        for source in sorted((ROOT / folder).rglob("*.swift")):
            for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
                match = IMPORT.match(line)
                if not match:
                    continue
                module = match.group(1)
                if module in targets and module != name and module not in declared:
                    problems.append(
                        f"{source.relative_to(ROOT)}:{number}:1: error: target {name} imports {module}, "
                        f"which Package.swift does not list among its dependencies; add \"{module}\" there"
                    )
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"imports: every import of the package's {len(targets)} targets is declared")


if __name__ == "__main__":
    main()
