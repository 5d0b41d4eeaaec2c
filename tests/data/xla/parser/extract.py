"""Extract the HLO modules of XLA's parser tests into ``modules.json`` (run by hand).

    git -C XLA_CHECKOUT show COMMIT:xla/hlo/parser/hlo_parser_test.cc > hlo_parser_test.cc
    python tests/data/xla/parser/extract.py hlo_parser_test.cc COMMIT

Each entry: ``name`` (the test and, for a test with several modules, a counter), ``origin``
(the table it comes from, or ``TEST_F``), ``text``, ``expect`` (``accept`` or ``reject``),
``verified`` (whether XLA's test runs its verifier: ``ParseAndReturnVerifiedModule``) and
``replica_count`` (the tables' third field, default 1).

The tables (``CreateTestCases``, ``CreateShortTestCases``, ``CreateNonRoundtripTestCases``)
are parsed and verified by XLA's test, every one accepted. For the individual tests the outcome
is read from what the test asserts about the status of the parse the raw string flows into
(``TF_ASSERT_OK...`` accepts; ``EXPECT_NE(absl::OkStatus(), ...)``, ``ExpectHasSubstr(...
.status().message(), ...)``, ``StatusIs(...)`` reject); a raw string that does not flow into
one of XLA's two module parsers (shapes, shardings, windows, templates) is left out, and so is
a test whose outcome this script cannot decide (listed under ``skipped``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RAW = re.compile(r'R"\((.*?)\)"', re.DOTALL)
TABLE = re.compile(r"std::vector<(\w+)> (Create\w+)\(\) \{")
TEST = re.compile(r"^TEST(?:_F)?\(\s*(\w+),\s*(\w+)\)\s*\{", re.MULTILINE)
PARSE = re.compile(r"(ParseAndReturnUnverifiedModule|ParseAndReturnVerifiedModule)\(")

# Tests whose module is assembled from pieces (absl::StrCat / StrFormat): rebuilt here from the
# raw strings the same way the test does.
PIECES = {
    "InvalidDimLabels": ("strcat", [",dim_labels=00_01->10", ",dim_labels=012_0123->210",
                                    ",dim_labels=013_0123->210"]),
    "AllReduceWithMode": ("format", ["mode=cross_replica,", ""]),
}  # fmt: skip

ACCEPT_CALL = re.compile(r"\b(?:TF_ASSERT_OK_AND_ASSIGN|TF_ASSERT_OK|TF_EXPECT_OK|ASSERT_OK)\b")
REJECT_USE = re.compile(
    r"EXPECT_NE\(\s*absl::OkStatus\(\)|EXPECT_FALSE\(\s*\w+\.ok\(\)|ASSERT_FALSE\(\s*\w+\.ok\(\)"
    r"|status\(\)\.message\(\)|StatusIs\(|EXPECT_THAT\(\s*\w+\.status\(\)"
)
ACCEPT_USE = re.compile(
    r"EXPECT_EQ\(\s*absl::OkStatus\(\)|TF_ASSERT_OK\(|TF_EXPECT_OK\(|ASSERT_TRUE\(\s*\w+\.ok\(\)"
    r"|EXPECT_TRUE\(\s*\w+\.ok\(\)|\.value\(\)|->entry_computation|IsOk\(\)"
)


DEFINITION = re.compile(r'(\w+)(?:\[\])?\s*=\s*((?:R"\(.*?\)"|"(?:[^"\\]|\\.)*"|\s)+);', re.DOTALL)
PIECE = re.compile(r'R"\((.*?)\)"|"((?:[^"\\]|\\.)*)"', re.DOTALL)
ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def _literal(code: str) -> str:
    """The value of adjacent C++ string literals (raw or escaped)."""
    parts = []
    for piece in PIECE.finditer(code):
        if piece.group(1) is not None:
            parts.append(piece.group(1))
        else:
            parts.append(re.sub(r"\\(.)", lambda m: ESCAPES[m.group(1)], piece.group(2)))
    return "".join(parts)


def tables(source: str) -> list[dict]:
    entries = []
    for match in TABLE.finditer(source):
        origin = match.group(2)
        end = source.index("// clang-format on", match.end())
        body = source[match.end() : end]
        # Entries: `{ "Name", R"(module)" [, R"(output)"] [, replica_count] }`
        for entry in re.finditer(
            r'\{\s*"(\w+)",\s*R"\((.*?)\)"((?:\s*,\s*(?:/\*\w+=\*/)?(?:R"\(.*?\)"|\d+))*),?\s*\}',
            body,
            re.DOTALL,
        ):
            rest = entry.group(3)
            count = re.search(r"(\d+),?$", rest.strip())
            entries.append(
                {
                    "name": entry.group(1),
                    "origin": origin,
                    "text": entry.group(2),
                    "expect": "accept",
                    "verified": True,
                    "replica_count": int(count.group(1)) if count else 1,
                }
            )
            output = RAW.search(rest)
            if output is not None:  # the non-round-trip tables' expected print: a module too
                entries.append(
                    {
                        "name": entry.group(1) + "_output",
                        "origin": origin,
                        "text": output.group(1),
                        "expect": "accept",
                        "verified": True,
                        "replica_count": 1,
                    }
                )
    return entries


def _statement(body: str, at: int) -> tuple[int, int]:
    start = max(body.rfind(";", 0, at), body.rfind("{\n", 0, at), body.rfind("}\n", 0, at)) + 1
    depth, i = 0, at
    while i < len(body):
        c = body[i]
        if c == '"' and body[i - 1] == "R":
            i = body.index(')"', i) + 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ";" and depth <= 0:
            break
        i += 1
    return start, i + 1


def _outcome(body: str, call_at: int) -> str | None:
    start, end = _statement(body, call_at)
    statement = body[start:end]
    if ACCEPT_CALL.search(statement[: call_at - start]):
        return "accept"
    inline = statement[call_at - start :]
    if re.search(r"\)\s*\.status\(\)\.message\(\)|StatusIs\(", inline) or re.search(
        r"EXPECT_NE\(\s*absl::OkStatus\(\)", statement
    ):
        return "reject"
    if re.search(r"EXPECT_FALSE\(|ASSERT_FALSE\(", statement[: call_at - start]):
        return "reject"
    if re.search(r"EXPECT_TRUE\(|ASSERT_TRUE\(|EXPECT_EQ\(\s*absl::OkStatus", statement):
        return "accept"
    assigned = re.search(r"\b(\w+)\s*=\s*\S*$", statement[: call_at - start])
    if assigned is None:
        return None
    name = assigned.group(1)
    later = body[end:]
    uses = [m.start() for m in re.finditer(r"\b" + name + r"\b", later)]
    for use in uses:
        use_start, use_end = _statement(later, use)
        use_text = later[use_start:use_end]
        if re.search(r"\b" + name + r"\s*=", use_text):
            break  # reassigned: a later parse
        if REJECT_USE.search(use_text):
            return "reject"
        if ACCEPT_USE.search(use_text):
            return "accept"
    return None


def individual_tests(source: str) -> tuple[list[dict], list[str]]:
    entries: list[dict] = []
    skipped: list[str] = []
    starts = list(TEST.finditer(source))
    for n, test in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(source)
        body = source[test.end() : end]
        name = test.group(2)
        if test.group(1) != "HloParserTest":
            name = f"{test.group(1)}_{name}"
        found: list[dict] = []
        variables = {m.group(1): _literal(m.group(2)) for m in DEFINITION.finditer(body)}
        if name in PIECES:
            how, fillers = PIECES[name]
            raws = [r.group(1) for r in RAW.finditer(body)]
            for filler in fillers:
                text = raws[0] + filler + raws[1] if how == "strcat" else raws[0] % (filler,)
                found.append({"text": text, "call": "ParseAndReturn?"})
            verified = "ParseAndReturnVerifiedModule" in body
            expect = "reject" if how == "strcat" else "accept"
            for item in found:
                item.update(expect=expect, verified=verified)
        else:
            for call in PARSE.finditer(body):
                argument = body[call.end() :].lstrip()
                if argument.startswith('R"('):
                    text = RAW.match(argument).group(1)
                else:
                    word = re.match(r"(\w+)\s*[,)]", argument)
                    if word is None or word.group(1) not in variables:
                        skipped.append(f"{name}: argument {argument[:30]!r}")
                        continue
                    text = variables[word.group(1)]
                outcome = _outcome(body, call.start())
                if outcome is None:
                    skipped.append(f"{name}: outcome undecided")
                    continue
                found.append(
                    {
                        "text": text,
                        "expect": outcome,
                        "verified": call.group(1) == "ParseAndReturnVerifiedModule",
                    }
                )
        for i, item in enumerate(found):
            entries.append(
                {
                    "name": name if len(found) == 1 else f"{name}_{i}",
                    "origin": "TEST",
                    "text": item["text"],
                    "expect": item["expect"],
                    "verified": item["verified"],
                    "replica_count": 1,
                }
            )
    return entries, skipped


def main() -> None:
    source = Path(sys.argv[1]).read_text()
    commit = sys.argv[2]
    entries = tables(source)
    more, skipped = individual_tests(source)
    entries += more
    seen: set[str] = set()
    for entry in entries:  # a name both tables use: the second one says which table
        if entry["name"] in seen:
            entry["name"] += "_" + entry["origin"]
        seen.add(entry["name"])
    out = {
        "source": "openxla/xla xla/hlo/parser/hlo_parser_test.cc",
        "commit": commit,
        "skipped": skipped,
        "modules": entries,
    }
    target = Path(__file__).with_name("modules.json")
    target.write_text(json.dumps(out, indent=1) + "\n")
    accepted = sum(e["expect"] == "accept" for e in entries)
    print(f"{len(entries)} modules ({accepted} accepted), {len(skipped)} skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
