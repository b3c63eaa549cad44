#!/usr/bin/env python3
"""Fails when a file of the repository points a reader at a document the repository does not hold.

A newcomer has only the repository: a comment or a page that sends the reader to a document ("see <page>.md",
"as the <name> page fixes it") must lead to a file they can open. Three kinds of reference are checked:
  - a markdown link `[text](<target>.md#part)` whose target is not a URL: it must name a file, relative to the
    linking file's folder (a target starting with `/` from the root), as a renderer would follow it;
  - a bare mention of `<name>.md` or `<folder>/<name>.md` in any text: it must name a file relative to the
    mentioning file's folder or to the root (a URL, a path starting with `/`, such as a route the server answers,
    and a quoted string on its own, such as a name in code that builds a path, are not mentions); a mention
    followed by a section number (`<name>.md §4`) needs a heading numbered so in that file;
  - a phrase that names a document by description (see PHRASES): it must come with a mention of the file it
    means, on the same line, that resolves.
A public document is cited by its public address (an http(s) URL), which is never checked here. `SKILL.md` is the
name of a kind of document (the skill each connector serves), not a file. A line that must hold such text as
data says `doc-check: allow`.

usage: doc_references.py ROOT        check the repository at ROOT; exit 1 and list each stale reference
       doc_references.py --self-test plant references in a scratch tree and check that each is caught
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outside_paths import repository_files, text_of  # noqa: E402  the same file list and text reading

ALLOW_MARK = "doc-check: allow"
GENERIC_NAMES = {"skill.md"}  # compared lowercase
# Phrases that name a document without its file, and the file name a resolving mention on the line must have.
PHRASES = [
    (re.compile(r"\badapters'? page\b", re.IGNORECASE), "adapters.md"),  # doc-check: allow
    (re.compile(r"\bplugin contract page\b", re.IGNORECASE), "plugin-contract.md"),  # doc-check: allow
    (re.compile(r"\bshared protocol(?:\.md| decisions| page)\b", re.IGNORECASE), None),  # doc-check: allow
]

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s)>\]\"'`]*")
MARKDOWN_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# A path-like token ending in .md; `$`, `{` and `}` are taken in so that a templated path stays one token.
SECTION_AFTER = re.compile(r"\s*§\s*(\d+)")
MENTION = re.compile(r"[A-Za-z0-9_.\-/${}~]*[A-Za-z0-9_\-}]\.md(?![A-Za-z0-9_])")


_numbered = {}


def numbered_sections(path):
    """The numbers of a markdown file's numbered headings (`## 4. IM profiles` gives 4)."""
    if path not in _numbered:
        text = text_of(path) or ""
        _numbered[path] = {int(m.group(1)) for m in re.finditer(r"(?m)^#+\s+(\d+)[.)\s]", text)}
    return _numbered[path]


def resolved_mention(root, folder, token):
    """The file a bare mention names (relative to its file's folder, else to the root), or None."""
    for base in (folder, []):
        parts = normalised(base, token)
        if parts is not None and exists(root, parts):
            return os.path.join(root, *parts)
    return None


def exists(root, parts):
    """True when the normalised path `parts` (a list of names, no `..` left) is a file of the tree."""
    return bool(parts) and os.path.isfile(os.path.join(root, *parts))


def normalised(base, target):
    where = list(base)
    for segment in target.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not where:
                return None
            where.pop()
        else:
            where.append(segment)
    return where


def link_resolves(root, folder, target):
    path = target.split("#", 1)[0].split("?", 1)[0]
    parts = normalised([] if path.startswith("/") else folder, path)
    return parts is not None and exists(root, parts)


def is_link_target(target):
    path = target.split("#", 1)[0].split("?", 1)[0]
    return path.lower().endswith(".md") and not URL.match(target) and not target.startswith("mailto:")


def problems_in(root, relpath, text):
    folder = [p for p in os.path.dirname(relpath).split("/") if p]
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if ALLOW_MARK in line:
            continue
        where = f"{relpath}:{number}"
        resolving = []  # basenames of the references on this line that resolve, for the phrase check
        linked_spans = []
        for m in MARKDOWN_LINK.finditer(line):
            target = m.group(1)
            linked_spans.append(m.span(1))
            if not is_link_target(target):
                continue
            if link_resolves(root, folder, target):
                resolving.append(os.path.basename(target.split("#", 1)[0]).lower())
            else:
                found.append(f"{where}: link to '{target}', which is not a file of the repository"
                             " (relative to this file)")
        bare = URL.sub(lambda m: " " * len(m.group(0)), line)
        for start, end in linked_spans:
            bare = bare[:start] + " " * (end - start) + bare[end:]
        for m in MENTION.finditer(bare):
            token = m.group(0)
            before = bare[m.start() - 1] if m.start() > 0 else ""
            after = bare[m.end()] if m.end() < len(bare) else ""
            if token.startswith("/") or "$" in token or "{" in token or "}" in token:
                continue  # a route, an absolute path or a templated one: not a document of the tree
            if before in "\"'" and before and after == before:
                continue  # a string literal on its own: code that builds a path
            if token.lower() in GENERIC_NAMES:
                continue  # the kind of document, not a file
            target = resolved_mention(root, folder, token)
            if target:
                resolving.append(os.path.basename(token).lower())
                section = SECTION_AFTER.match(bare, m.end())
                if section and int(section.group(1)) not in numbered_sections(target):
                    found.append(f"{where}: '{token} §{section.group(1)}': that file has no section numbered"
                                 f" {section.group(1)}")
            else:
                found.append(f"{where}: '{token}' names a document the repository does not hold"
                             " (relative to this file or the root)")
        for phrase, name in PHRASES:
            for m in phrase.finditer(line):
                if name is None or name not in resolving:
                    means = f" without a mention of {name} that resolves" if name else ""
                    found.append(f"{where}: '{m.group(0)}' names a document{means}; point at the file")
    return found


def check(root):
    found = []
    for rel in repository_files(root):
        text = text_of(os.path.join(root, rel))
        if text is not None:
            found += problems_in(root, rel, text)
    return found


def self_test():
    md = ".md"  # spelled apart so that this file's own lines hold no reference
    present = {
        "docs/guide" + md: "# guide\n",
        "docs/adapters" + md: "# adapters\n\n## 2. Rules\n",
        "plugins/x/SKILL" + md: "---\nname: connector-x\n---\n",
    }
    planted = {
        "core/a.hpp": "// the host's promises (plugin-contract" + md + " \"Threads\")\n",
        "core/b.hpp": "// as the adapters " + "page fixes it\n",
        "core/q.hpp": "// the served cards (docs/guide" + md + " §4)\n",
        "docs/c" + md: "See [the contract](plugin-contract" + md + "#life-cycle).\n",
        "docs/d" + md: "See [guide](docs/guide" + md + ") from the wrong folder.\n",
        "tests/e_test.cpp": "// (profiles/xagent_im_v2" + md + " §5)\n",
        "tools/f.sh": "# the shared protocol" + md + " §7 says so\n",
        "docs/g" + md: "The adapters " + "page ([adapters](missing" + md + ")).\n",
    }
    clean = {
        "core/h.hpp": "// docs/guide" + md + " \"Part\" and docs/adapters" + md + " \"irc\"\n",
        "docs/i" + md: "[guide](guide" + md + "#part), [root](/docs/guide" + md + "), guide" + md + "\n",
        "docs/j" + md: "The public spec: [IM v2](https://example.org/spec/xagent_im_v2" + md + "#5).\n",
        "core/k.cpp": "constexpr auto p = \"/skill" + md + "\";  // GET {base}/skill" + md + ", the served SKILL" + md + "\n",
        "tools/l.py": "path = os.path.join(src, \"docs\", \"operations" + md + "\")\n",
        "tools/m.sh": "echo \"wrote $out/$date" + md + "\"; cat ${SRC}/plugins/x/SKILL" + md + "\n",
        "docs/n" + md: "As [adapters" + md + "](adapters" + md + ") fixes it (the adapters " + "page).\n",
        "core/r.hpp": "// numbered (docs/adapters" + md + " §2)\n",
        "tests/o_test.cpp": "write(\"see plugin-contract" + md + "\");  // doc-check: allow\n",
        "core/p.hpp": "// plugins/x/SKILL" + md + " is compiled in\n",
    }
    with tempfile.TemporaryDirectory() as tree:
        for rel, text in {**present, **planted, **clean}.items():
            os.makedirs(os.path.join(tree, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tree, rel), "w") as f:
                f.write(text)
        found = check(tree)
    caught = {line.split(":", 1)[0] for line in found}
    missed = sorted(set(planted) - caught)
    wrong = sorted(caught - set(planted))
    for rel in missed:
        print(f"missed: {rel}: {planted[rel].strip()}")
    for line in found:
        if line.split(":", 1)[0] in wrong:
            print(f"flagged a clean file: {line}")
    return not missed and not wrong


def main():
    if sys.argv[1:] == ["--self-test"]:
        ok = self_test()
        print("self-test: every planted reference caught, no clean line flagged" if ok else "self-test failed")
        sys.exit(0 if ok else 1)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = check(sys.argv[1])
    for line in found:
        print(line)
    print(f"{len(found)} reference(s) to documents the repository does not hold" if found
          else "every document reference resolves")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
