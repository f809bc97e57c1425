"""Which blocks of upstream's source the kit reaches: node's V8 coverage of the upstream port run.

Run the kit with the port under coverage (node 22 writes one JSON file per process)::

    NODE_V8_COVERAGE=COVDIR python -m trio_harness conformance run \\
        --port "NODE --enable-source-maps LAUNCHER.mjs"

then ``python bench/kit_coverage.py COVDIR --match packages/core/tools/src/json-schema.ts ...``.
V8's block coverage gives byte ranges of the code tsx generated with a count each (a block's
count is that of the innermost range holding it); the source maps node records beside them
(``source-map-cache``) map each range back to a line of the TypeScript source. A block is
*reached* when some process ran it. The script prints, per file, blocks reached / all and each
block never reached with its first source line (``--json`` writes the same as data).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

_B64 = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


def _vlq(text: str) -> list[int]:
    values, shift, value = [], 0, 0
    for char in text:
        digit = _B64[char]
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        values.append(-(value >> 1) if value & 1 else value >> 1)
        shift = value = 0
    return values


def _decode(mappings: str) -> list[list[tuple[int, int]]]:
    """Per generated line: ``(generated column, source line)`` segments (one source assumed)."""
    lines: list[list[tuple[int, int]]] = []
    source_line = 0
    for line in mappings.split(";"):
        column = 0
        segments = []
        for segment in line.split(","):
            if not segment:
                continue
            fields = _vlq(segment)
            column += fields[0]
            if len(fields) >= 4:
                source_line += fields[2]
                segments.append((column, source_line))
        lines.append(segments)
    return lines


def _source_line(
    offset: int, line_starts: list[int], mapped: list[list[tuple[int, int]]]
) -> int | None:
    low, high = 0, len(line_starts) - 1
    while low < high:  # the last line starting at or before offset
        middle = (low + high + 1) // 2
        if line_starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    column = offset - line_starts[low]
    best = None
    for line in range(low, -1, -1):
        segments = mapped[line] if line < len(mapped) else []
        candidates = [src for col, src in segments if line < low or col <= column]
        if candidates:
            best = candidates[-1]
            break
    return best


def collect(coverage_dir: Path, matches: list[str]) -> dict[str, Any]:
    reached: dict[tuple[str, int, int], bool] = {}
    maps: dict[str, Any] = {}
    for path in sorted(coverage_dir.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for url, entry in (data.get("source-map-cache") or {}).items():
            if any(match in url for match in matches):
                maps[url] = entry
        for script in data.get("result", []):
            url = script["url"]
            if not any(match in url for match in matches):
                continue
            for function in script["functions"]:
                for block in function["ranges"]:
                    key = (url, block["startOffset"], block["endOffset"])
                    reached[key] = reached.get(key, False) or block["count"] > 0
    report: dict[str, Any] = {}
    for url in sorted({key[0] for key in reached}):
        entry = maps.get(url)
        line_starts: list[int] = [0]
        mapped: list[list[tuple[int, int]]] = []
        source: list[str] = []
        if entry is not None:
            for length in entry["lineLengths"]:
                line_starts.append(line_starts[-1] + length + 1)
            mapped = _decode(entry["data"]["mappings"])
            contents = (entry["data"].get("sourcesContent") or [None])[0]
            if contents is None and url.startswith("file://"):
                contents = Path(url[7:]).read_text(encoding="utf-8")
            source = (contents or "").splitlines()
        blocks = [(start, end, hit) for (u, start, end), hit in reached.items() if u == url]
        missed = []
        for start, _end, hit in sorted(blocks):
            if hit:
                continue
            line = _source_line(start, line_starts, mapped) if mapped else None
            text = source[line].strip() if line is not None and line < len(source) else ""
            missed.append({"line": None if line is None else line + 1, "text": text[:120]})
        report[url] = {
            "blocks": len(blocks),
            "reached": sum(1 for _, _, hit in blocks if hit),
            "missed": missed,
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("coverage_dir", type=Path)
    parser.add_argument(
        "--match", action="append", required=True, help="URL substring (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="write the report as JSON")
    args = parser.parse_args(argv)
    report = collect(args.coverage_dir, args.match)
    for url, entry in report.items():
        name = url.split("/packages/")[-1]
        print(f"{name}: {entry['reached']} / {entry['blocks']} blocks reached")
        for block in entry["missed"]:
            print(f"    line {block['line']}: {block['text']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
