#!/usr/bin/env python3
"""Validates JSON documents against one of the project's JSON Schemas (tests/schemas/*.json).

usage: schema_check.py SCHEMA.json DOC.json [DOC.json ...]
Exit 0 when every document is valid; otherwise prints each violation and exits 1.
"""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
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
