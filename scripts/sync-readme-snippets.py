#!/usr/bin/env python3
"""Copies each tagged region of a sample source into the README block that names it.

README.md marks a snippet with `<!-- snippet: PATH#TAG -->` followed by a ```java block; the block is replaced by the
lines between `// tag::TAG[]` and `// end::TAG[]` in PATH, without their common indentation. ReadmeSnippetsTest fails
the build when the two differ; run this after changing a sample.
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent


def region(path, tag):
    lines = (root / path).read_text(encoding="utf-8").split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip() == f"// tag::{tag}[]")
    end = next(i for i, l in enumerate(lines) if l.strip() == f"// end::{tag}[]")
    body = lines[start + 1 : end]
    indent = min(len(l) - len(l.lstrip()) for l in body if l.strip())
    return "\n".join(l[indent:] if l.strip() else "" for l in body)


readme = root / "README.md"
text = readme.read_text(encoding="utf-8")
text = re.sub(
    r"(<!-- snippet: (\S+?)#(\S+?) -->\n```java\n)(.*?)\n```",
    lambda m: m.group(1) + region(m.group(2), m.group(3)) + "\n```",
    text,
    flags=re.S,
)
readme.write_text(text, encoding="utf-8")
