#!/usr/bin/env python3
"""Merges the symbol graphs of Folio's targets into one module, `Folio`.

`import Folio` gives the whole library, whose types live in one target per
layer. DocC documents one module per archive, and a type's page can only
curate members of its own module, so `Store`'s index could not list
`sync()` (FolioGit) beside `collection(_:)` (FolioCore). As one module the
documentation reads as the user imports it.

usage: merge-symbol-graphs.py INPUT_DIR OUTPUT_DIR MODULE...
"""
import json
import os
import sys


def main():
    source, target, modules = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    merged = {}  # output module suffix ("" or "@Swift") -> graph
    for name in sorted(os.listdir(source)):
        if not name.endswith(".symbols.json"):
            continue
        stem = name[: -len(".symbols.json")]
        module, _, extended = stem.partition("@")
        if module not in modules:
            continue
        graph = json.load(open(os.path.join(source, name)))
        # Extensions of one Folio target's types by another are members
        # of the one module; extensions of Swift's types stay extensions.
        key = "" if not extended or extended in modules else "@" + extended
        into = merged.setdefault(key, {
            "metadata": graph["metadata"],
            "module": dict(graph["module"], name="Folio"),
            "symbols": {},
            "relationships": {},
        })
        for symbol in graph["symbols"]:
            into["symbols"].setdefault(symbol["identifier"]["precise"], symbol)
        for relation in graph["relationships"]:
            into["relationships"].setdefault(json.dumps(relation, sort_keys=True), relation)
    os.makedirs(target, exist_ok=True)
    for key, graph in merged.items():
        graph["symbols"] = list(graph["symbols"].values())
        graph["relationships"] = list(graph["relationships"].values())
        with open(os.path.join(target, "Folio" + key + ".symbols.json"), "w") as out:
            json.dump(graph, out)


if __name__ == "__main__":
    main()
