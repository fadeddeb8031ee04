#!/usr/bin/env python3
"""README and docs/ code snippets come from compiled examples, between `// example-begin NAME` and
`// example-end NAME` (the CUB convention), so they cannot rot.

    tools/readme_snippets.py          rewrite the snippet blocks of README.md and docs/*.md
    tools/readme_snippets.py --check  exit 1 if any block differs (a CTest test runs this)

In README.md (and docs/*.md) a block is `<!-- snippet: NAME -->` followed by a fenced cpp block, or the marker
alone (the first run inserts the block).
"""
import pathlib
import re
import sys
import textwrap

root = pathlib.Path(__file__).resolve().parent.parent
snippets = {}
for source in sorted((root / "examples").glob("*.cu")):
    text = source.read_text()
    for m in re.finditer(r"[ \t]*// example-begin (\S+)\n(.*?)[ \t]*// example-end \1\n", text, re.S):
        snippets[m.group(1)] = (source.relative_to(root), textwrap.dedent(m.group(2)))

def block(m):
    name = m.group(1)
    if name not in snippets:
        sys.exit(f"a document names snippet '{name}', which no example defines")
    return f"<!-- snippet: {name} -->\n```cpp\n{snippets[name][1]}```\n"


stale, blocks = [], 0
for doc in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
    old = doc.read_text()
    new = re.sub(r"<!-- snippet: (\S+) -->\n(?:```cpp\n.*?```\n)?", block, old, flags=re.S)
    blocks += len(re.findall("<!-- snippet:", old))
    if new != old:
        stale.append(str(doc.relative_to(root)))
        if "--check" not in sys.argv[1:]:
            doc.write_text(new)
if "--check" in sys.argv[1:]:
    if stale:
        print(f"{', '.join(stale)}: snippets differ from examples/; run tools/readme_snippets.py")
        sys.exit(1)
    print(f"README.md and docs/ snippets match the examples ({blocks} blocks)")
