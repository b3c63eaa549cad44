#!/usr/bin/env python3
"""Validates JSON documents against a JSON Schema published inside a Markdown page of the spec.

usage: schema_check.py SCHEMA.md DOC.json [DOC.json ...]
Exit 0 when every document is valid; otherwise prints each violation and exits 1.
"""
import json
import re
import sys

import jsonschema


def schema_from_markdown(path):
    text = open(path, encoding="utf-8").read()
    match = re.search(r"```json\s*\n(.*?)\n```", text, re.S)
    if not match:
        sys.exit(f"{path}: no ```json block")
    return json.loads(match.group(1))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    schema = schema_from_markdown(sys.argv[1])
    validator = jsonschema.Draft202012Validator(schema)
    failed = False
    for doc_path in sys.argv[2:]:
        with open(doc_path, encoding="utf-8") as f:
            doc = json.load(f)
        for error in validator.iter_errors(doc):
            failed = True
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            print(f"{doc_path}: {where}: {error.message}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
