"""The questions a pass asks of a bundle's trees and fetched files, kept so that what it derived can be
reused on another bundle that answers every one of them the same way.

The recorder (verifier.record.fetched) resolves launches once to learn which files they read, then
the verdict resolves them again on the completed bundle. A resolution depends only on its inputs (the
policies, the review date) and on what it asked of the bundle: whether a path is there and what it
holds, which paths lie under a folder, the layout, and the files other repositories serve. While a
`TreeQuestions` is open, a watched bundle (`watch`) notes every such question with the answer it got;
`TreeQuestions.hold_for(other)` asks them all again of the other bundle. When every answer is the
same, the other bundle's resolution would ask the same questions, get the same answers and produce
the same launches, so the recorder's launches serve the verdict (each launch resolved once).

A question whose answer depends on every path of a side (iterating its files) is noted as the whole
list of that side's paths. A file the pass found is not noted one by one: the other bundle must hold
every file the watched one held, with the same bytes. Nothing is keyed by path alone or by time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from verifier.core import processcache

# The bundles are verifier.core.model.Bundle, which imports this module (its trees note questions).
Bundle = Any
Question = tuple[Any, ...]
T = TypeVar("T")


# A tree's file is one `bytes` object that every reading of it asks about again (#2263: 8,563 digests
# of 634 contents); its digest is kept with it. Bounded, and dropped between replayed PRs.
_DIGESTS: processcache.ByObject[bytes] = processcache.ByObject("watch.digests", 1024)


def digest(data: bytes | None) -> bytes | None:
    """A content's 16-byte BLAKE2b digest (None: no content)."""
    if data is None:
        return None
    if type(data) is not bytes:  # only an immutable content keeps its digest
        return hashlib.blake2b(data, digest_size=16).digest()
    got = _DIGESTS.get(data)
    if got is None:
        got = _DIGESTS.put(data, hashlib.blake2b(data, digest_size=16).digest())
    return got


class TreeQuestions:
    """Questions asked of a watched bundle, each with its first answer."""

    def __init__(self) -> None:
        self.asked: dict[Question, Any] = {}
        self.held: dict[str, dict[str, bytes]] = {}  # side -> the files the watched tree held
        self.open = True
        self._aside = 0

    def ask(self, question: Question, answer: Any) -> None:
        """Note a question and the answer it got (the first answer counts)."""
        if self.open and not self._aside:
            self.asked.setdefault(question, answer)

    @contextmanager
    def aside(self) -> Iterator[None]:
        """Questions asked inside are not noted: the caller notes the one it answers itself."""
        self._aside += 1
        try:
            yield
        finally:
            self._aside -= 1

    def close(self) -> None:
        """Stop noting (the bundle's files may then be copied freely)."""
        self.open = False

    def hold_for(self, bundle: Bundle) -> bool:
        """Whether `bundle` holds every file the watched bundle held, unchanged, and answers every
        noted question as it was answered."""
        for side, files in self.held.items():
            other = (bundle.base if side == "base" else bundle.head).files
            if any(other.get(path) != data for path, data in dict.items(files)):
                return False
        return all(answer_of(bundle, question) == answer for question, answer in self.asked.items())


def answer_of(bundle: Bundle, question: Question) -> Any:
    """The answer `bundle` gives to one question (as `WatchedFiles`, `Tree` and `Bundle` note them)."""
    side, what = question[0], question[1]
    if what == "upstream":
        hit = bundle.upstream_file(*question[2:])
        return hit.status, hit.commit, digest(hit.data)
    tree = bundle.base if side == "base" else bundle.head
    if what == "file":
        return digest(tree.files.get(question[2]))
    if what == "exists":
        return question[2] in tree.files
    if what == "held-or-listed":
        return question[2] in tree.files or (tree.listing is not None and question[2] in tree.listing)
    if what == "paths":
        return tuple(tree.paths(question[2]))
    if what == "layout":
        return tree.layout
    if what == "count":
        return len(tree.files)
    if what == "nonempty":
        return tree.holds_files()
    if what == "list":
        return frozenset(tree.files)
    raise ValueError(f"unknown question {question!r}")


class WatchedFiles(dict[str, bytes]):
    """A side's files that note, while their questions are open, every path asked for and missing,
    and every read of the whole list (the paths a file holds are noted by its reader)."""

    def __init__(self, files: dict[str, bytes], side: str, questions: TreeQuestions) -> None:
        super().__init__(files)
        self.side = side
        self.questions = questions
        questions.held[side] = self

    def _missing(self, path: object) -> None:
        self.questions.ask((self.side, "file", path), None)

    def _listed(self) -> None:
        self.questions.ask((self.side, "list"), frozenset(dict.keys(self)))

    def __contains__(self, path: object) -> bool:
        found = dict.__contains__(self, path)
        if not found:
            self._missing(path)
        return found

    def get(self, path: str, default: Any = None) -> Any:  # type: ignore[override]
        if not dict.__contains__(self, path):
            self._missing(path)
            return default
        return dict.__getitem__(self, path)

    def __getitem__(self, path: str) -> bytes:
        if not dict.__contains__(self, path):
            self._missing(path)
        return dict.__getitem__(self, path)

    def __len__(self) -> int:
        count = dict.__len__(self)
        self.questions.ask((self.side, "count"), count)
        return count

    def __iter__(self) -> Iterator[str]:
        self._listed()
        return dict.__iter__(self)

    def keys(self) -> Any:
        self._listed()
        return dict.keys(self)

    def items(self) -> Any:
        self._listed()
        return dict.items(self)

    def values(self) -> Any:
        self._listed()
        return dict.values(self)

    def copy(self) -> dict[str, bytes]:
        self._listed()
        return dict(dict.items(self))


def watch(bundle: Bundle, questions: TreeQuestions) -> Bundle:
    """The bundle whose trees note the questions asked of them (its `upstream_file` notes the files
    other repositories serve while its trees are watched)."""
    return bundle.model_copy(update={
        "base": bundle.base.model_copy(update={"files": WatchedFiles(bundle.base.files, "base", questions)}),
        "head": bundle.head.model_copy(update={"files": WatchedFiles(bundle.head.files, "head", questions)}),
    })


def unwatch(bundle: Bundle) -> Bundle:
    """The bundle with plain files wherever a watched tree remains."""
    update: dict[str, Any] = {}
    for side in ("base", "head"):
        tree = getattr(bundle, side)
        if isinstance(tree.files, WatchedFiles):
            update[side] = tree.model_copy(update={"files": dict(dict.items(tree.files))})
    return bundle.model_copy(update=update) if update else bundle


def watching(files: Any) -> bool:
    """Whether a tree's files note the questions asked of them now."""
    return isinstance(files, WatchedFiles) and files.questions.open


@contextmanager
def aside(files: Any) -> Iterator[None]:
    """Questions asked inside are not noted (the caller notes the one it answers itself)."""
    if isinstance(files, WatchedFiles):
        with files.questions.aside():
            yield
    else:
        yield


def asked(files: Any, question: Question, compute: Callable[[], T], answer: Callable[[T], Any] | None = None) -> T:
    """`compute()`, which answers `question` about the side whose files these are: when they are
    watched, the questions it asks on the way are set aside and `question` is noted with its answer
    (`answer(result)`, else the result itself)."""
    if not watching(files):
        return compute()
    with aside(files):
        result = compute()
    note(files, question, result if answer is None else answer(result))
    return result


def note(files: Any, question: Question, answer: Any) -> None:
    """Note a question about the side whose files these are, when they are watched."""
    if isinstance(files, WatchedFiles):
        files.questions.ask((files.side, *question), answer)
