"""bindings-swift/README.md's runnable snippet (the ```swift block after a
``<!-- snippet: run -->`` line) is the example file the package builds,
character for character, and prints what its ``// comment`` after each
``print(...)`` says.

    swift_snippets.py source            # the README block equals the file
    swift_snippets.py output <stdout>   # the run printed the expectations
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "bindings-swift" / "README.md"
EXAMPLE = ROOT / "examples" / "swift-cli" / "Sources" / "ReadmeQuickStart" / "main.swift"


def snippet() -> str:
    blocks = re.findall(r"<!-- snippet: run -->\n```swift\n(.*?)```", README.read_text(), re.S)
    if len(blocks) != 1:
        sys.exit(f"{README}: expected one runnable Swift snippet, found {len(blocks)}")
    return blocks[0]


def main() -> None:
    code = snippet()
    if sys.argv[1:] == ["source"]:
        if code != EXAMPLE.read_text():
            sys.exit(f"{README}'s runnable snippet differs from {EXAMPLE.relative_to(ROOT)}: copy one to the other")
        print("bindings-swift/README.md snippet == ReadmeQuickStart/main.swift")
        return
    if len(sys.argv) == 3 and sys.argv[1] == "output":
        expected = re.findall(r"^\s*print\(.*\)  // (.+)$", code, re.M)
        got = Path(sys.argv[2]).read_text().splitlines()
        if not expected or got != expected:
            sys.exit(f"the README's Swift snippet printed {got}, its comments say {expected}")
        print(f"the README's Swift snippet printed what it says ({len(expected)} lines)")
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
