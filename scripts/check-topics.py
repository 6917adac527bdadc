#!/usr/bin/env python3
"""Fails when a documentation page lists members DocC had to group itself:
every public member of the named pages must sit under a `## Topics` heading.

usage: check-topics.py ARCHIVE PAGE...   (PAGE as documentation/folio/store)
"""
import json
import os
import sys

archive, pages = sys.argv[1], sys.argv[2:]
missing = []
for page in pages:
    data = json.load(open(os.path.join(archive, "data", page + ".json")))
    for section in data.get("topicSections", []):
        if section.get("generated"):
            for identifier in section["identifiers"]:
                missing.append(f"{page}: {data['references'][identifier]['title']} ({section['title']})")
if missing:
    print("members missing from ## Topics:\n  " + "\n  ".join(missing), file=sys.stderr)
    sys.exit(1)
print(f"topics: every member of {', '.join(pages)} is curated")
