"""A launch script's ``[[ ... ]]`` test, decided with a job's variables.

The runner scripts choose the srt-slurm they clone by ``if``/``elif`` chains over string
(in)equalities of the job's variables (``IS_AGENTIC``, ``MODEL_PREFIX``, ...), joined by
``&&``, ``||``, ``!`` and parentheses. Such a test is evaluated here; anything else (a file
test, a variable the master config does not give, a command substitution) cannot be decided
and is refused naming the script and line: the tool never guesses a release.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from syncer.errors import SyncError
from syncer.wording import js

_TOKEN = re.compile(
    r"\s*(\[\[|\]\]|&&|\|\||==|!=|=|\(|\)|!|\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s()\"']+)"
)


def evaluate(cond: str, variables: dict[str, str], script: str, line: int) -> bool:
    """A ``[[ ... ]]`` test of string (in)equalities joined by ``&&``, ``||``, ``!`` and
    parentheses, with the job's variables. Anything else cannot be decided: refused."""
    tokens: list[str] = []
    pos = 0
    while pos < len(cond):
        m = _TOKEN.match(cond, pos)
        if not m:
            break
        tokens.append(m.group(1))
        pos = m.end()
    test = _Test(cond, [t for t in tokens if t not in ("[[", "]]")], variables, script, line)
    if pos != len(cond.rstrip()) and cond[pos:].strip():
        raise test.refuse("is not a [[ ... ]] string test")
    if not test.words or tokens.count("[[") != tokens.count("]]"):
        raise test.refuse("is not a [[ ... ]] string test")
    result = test.disjunction()
    if test.at != len(test.words):
        raise test.refuse("has trailing words")
    return result


class _Test:
    """The words of one ``[[ ... ]]`` test, read left to right from ``at``."""

    def __init__(
        self, cond: str, words: list[str], variables: dict[str, str], script: str, line: int
    ) -> None:
        self.cond, self.words, self.variables = cond, words, variables
        self.script, self.line = script, line
        self.at = 0

    def refuse(self, why: str) -> SyncError:
        return SyncError(
            f"cannot decide which srt-slurm this runner clones: the condition {js(self.cond)} "
            f"{why}",
            path=self.script,
            line=self.line,
        )

    def operand(self) -> str:
        word = self.words[self.at]
        self.at += 1
        if word.startswith("'"):
            return word[1:-1]
        inner = word[1:-1] if word.startswith('"') else word
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?", inner)
        if m:
            name, default = m.group(1), m.group(2)
            if name in self.variables:
                return self.variables[name]
            if default is not None and name not in self.variables:
                raise self.refuse(f"tests ${name}, which the master config does not give")
            raise self.refuse(f"tests ${name}, which the master config does not give")
        if "$" in inner or "`" in inner:
            raise self.refuse(f"tests {js(word)}, which this reader cannot expand")
        return inner

    def primary(self) -> bool:
        words = self.words
        if self.at >= len(words):
            raise self.refuse("ends early")
        if words[self.at] == "!":
            self.at += 1
            return not self.primary()
        if words[self.at] == "(":
            self.at += 1
            value = self.disjunction()
            if self.at >= len(words) or words[self.at] != ")":
                raise self.refuse("has unbalanced parentheses")
            self.at += 1
            return value
        if words[self.at].startswith("-"):
            raise self.refuse(f"uses the file or string test {js(words[self.at])}")
        left = self.operand()
        if self.at >= len(words) or words[self.at] not in ("==", "=", "!="):
            raise self.refuse("is not a string comparison")
        op = words[self.at]
        self.at += 1
        if self.at >= len(words):
            raise self.refuse("ends early")
        right = self.operand()
        return (left == right) if op != "!=" else (left != right)

    # both sides are evaluated: a refusal anywhere in the test is a refusal (bash would have
    # short-circuited, but an undecidable test is worth naming either way)
    def chain(self, op: str, term: Callable[[], bool]) -> bool:
        """``term (op term)*``; every term evaluated (a refusal in any one is a refusal)."""
        values = [term()]
        while self.at < len(self.words) and self.words[self.at] == op:
            self.at += 1
            values.append(term())
        return all(values) if op == "&&" else any(values)

    def conjunction(self) -> bool:
        return self.chain("&&", self.primary)

    def disjunction(self) -> bool:
        return self.chain("||", self.conjunction)
