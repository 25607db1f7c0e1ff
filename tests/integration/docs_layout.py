#!/usr/bin/env python3
"""The documentation's layout, for test_docs: README.md guides, docs/*.md explain,
man/rlock.1 specifies. `docs_layout.py CHECK ROOT [ARG]` prints one problem a line
(nothing when all is well):

  links ROOT        a relative link of README.md or docs/*.md whose file, or whose
                    #anchor (a heading of that file, as GitHub spells anchors), is missing
  unlinked ROOT     a docs/*.md page README.md does not link to
  twice ROOT N      a passage of N words written in two of README.md, docs/*.md and
                    the man page (one home per fact: a copy drifts from the original)
  env ROOT          a variable rlock reads or sets (a "RLOCK_..." string or a getenv
                    name in src/) that the man page's ENVIRONMENT does not describe
  md-refs ROOT      a .md file a test names that does not exist
"""
import os
import re
import subprocess
import sys


def guide(root):
    pages = sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    return ["README.md"] + pages


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def without_code(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"`|\*\*", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    return {slug(m) for m in re.findall(r"^#+ (.*)$", without_code(text), flags=re.M)}


def links(root):
    for page in guide(root):
        text = without_code(read(root, page))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            where = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(os.path.join(root, where)):
                print(f"{page}: link to {target}: no file {where}")
            elif anchor and where.endswith(".md") and anchor not in anchors(read(root, where)):
                print(f"{page}: link to {target}: no heading #{anchor} in {where}")


def unlinked(root):
    readme = read(root, "README.md")
    for page in guide(root)[1:]:
        if f"]({page})" not in readme and f"]({page}#" not in readme:
            print(f"README.md does not link to {page}")


def man_text(root):
    out = subprocess.run(["groff", "-man", "-Tutf8", "-rLL=2000n", "-rHY=0", os.path.join(root, "man/rlock.1")],
                         capture_output=True, text=True, check=True).stdout
    return re.sub(r".\x08", "", re.sub(r"\x1b\[[0-9;]*m", "", out))


def prose(text):
    text = without_code(text)
    text = re.sub(r"^\|.*$|^#.*$", "", text, flags=re.M)  # tables, headings
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)


def twice(root, n):
    texts = {page: prose(read(root, page)) for page in guide(root)}
    texts["man/rlock.1"] = man_text(root)
    homes = {}
    for name, text in texts.items():
        words = re.findall(r"[a-z0-9_]+", text.lower())
        for i in range(len(words) - n + 1):
            homes.setdefault(" ".join(words[i:i + n]), set()).add(name)
    for passage, names in sorted(homes.items()):
        if len(names) > 1:
            print(f"{' and '.join(sorted(names))}: \"{passage}\"")


# Between rlock and its guardian only, never in CMD's environment or the user's.
INTERNAL = {"RLOCK_GUARDIAN"}


def env(root):
    names = set()
    for top, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            text = read(root, os.path.relpath(os.path.join(top, f), root))
            names.update(re.findall(r'"(RLOCK_[A-Z0-9_]+)"', text))
            names.update(re.findall(r'getenv\("([A-Z_][A-Z0-9_]*)"\)', text))
    text = man_text(root)
    section = text[text.index("\nENVIRONMENT\n"):]
    section = section[:re.search(r"\n[A-Z][A-Z ]+\n", section[1:]).start() + 1]
    # An entry's tag: one or more names at the entry's indent ("RLOCK_NAME, RLOCK_FENCE").
    described = set()
    for tag in re.findall(r"^ {7}([A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*)", section, flags=re.M):
        described.update(tag.split(", "))
    for name in sorted(names - INTERNAL - described):
        print(f"{name} has no entry in the man page's ENVIRONMENT")


def md_refs(root):
    for top, _, files in os.walk(os.path.join(root, "tests")):
        for f in files:
            if not f.endswith((".sh", ".py")) or f == os.path.basename(__file__):
                continue
            path = os.path.join(top, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for ref in set(re.findall(r"[\w./${}-]*[\w-]\.md\b", text)):
                ref = re.sub(r"^\$\{?\w+\}?/", "", ref)  # "$SRC/docs/x.md": root-relative
                if "$" in ref or ref.startswith("/"):
                    continue
                if "/" in ref and not os.path.exists(os.path.join(root, ref.split("/")[0])) \
                        and not os.path.exists(os.path.join(top, ref.split("/")[0])):
                    continue  # not a path in the source tree (the package's share/doc/...)
                if not (os.path.exists(os.path.join(root, ref)) or os.path.exists(os.path.join(top, ref))):
                    print(f"{os.path.relpath(path, root)} names {ref}, which does not exist")


if __name__ == "__main__":
    check, root = sys.argv[1], sys.argv[2]
    {"links": lambda: links(root), "unlinked": lambda: unlinked(root),
     "twice": lambda: twice(root, int(sys.argv[3])), "env": lambda: env(root),
     "md-refs": lambda: md_refs(root)}[check]()
