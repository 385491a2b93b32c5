"""JSON Lines lines that end as an earlier line ended: only the part before is parsed.

A stream of bundles repeats the same records on most of its lines: each line's run is
new, but the protocol and the environment it references, written after it, are the
ones of many lines before (an importer writes one bundle per measured case; a machine
and a harness serve thousands). Parsing, re-writing and proving those records again on
every line is much of a line's intake. :class:`TailMemo` remembers such a line
end (its *tail*: from the ``,`` before the first shared member to the line's end) with
what it parses to, and a later line ending in the very same bytes has only its head
parsed; the tail's members are then the remembered objects, shared by every document
read with them. That is why a memo is used only where the documents are checked and
dropped (``validate``'s quick pass): a caller that keeps or changes values reads
without one.

Why the verdict and the value are those of the whole line. A tail is remembered only
when ``"{" + tail[1:]`` was read by the strict intake
(:func:`~kernelindex_sdk.reading.intake.fast_loads`, every rule of it) to an object
with at least one member; so the tail is ``,``, one or more members, ``}`` and the
line's end. A line ending in that tail is taken with it only when
``head + "}"`` (the bytes before the tail, closed) is read the same way to an object
with at least one member and none of the tail's keys. That read proves the cut lies
between two members of the outermost object: a cut inside a string leaves it
unterminated, a cut deeper in the nesting leaves a bracket open, a cut after a
complete value leaves trailing data, and a cut right after ``{`` gives an empty head,
which is refused (it would accept ``{,`` …). So the line is ``{`` + members + ``,`` +
members + ``}``: one JSON object whose members are the head's then the tail's, which is
how the dict is built. Each strict rule holds for the line when it holds for both parts:
duplicate keys (none within either part, none across: the keys are disjoint), numbers,
strings and surrogates (tokens, each whole in one part), nesting (each member is as
deep in its part as in the line), a byte-order mark (the head starts the line) and
trailing data (the tail ends it). A line that is not taken with a tail is read whole, as
without a memo; so is everything the strict intake cannot decide alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

# The strict intake's Rust reader and its "cannot decide": this module is its companion.
from kernelindex_sdk.reading.intake import FALLBACK, fast_loads
from kernelindex_sdk.reading.intake.jsonl import TAKEN

__all__ = ["SharedTail", "TailMemo", "Take"]


class SharedTail:
    """A line end seen before: its bytes, from the ``,`` before its first member on,
    and the members they hold (the objects every document read with it shares).
    Hashed and compared by identity.

    ``checked`` is a checker's to set (the memo never reads it): what it found for the
    tail's members, kept on the tail so that it goes when the memo drops the tail.
    """

    __slots__ = ("checked", "keys", "members", "text")

    def __init__(self, text: bytes, members: dict[str, Any]) -> None:
        self.text = text
        self.members = members
        self.keys = frozenset(members)
        self.checked: Any = None


#: What a reader does with each document a :class:`TailMemo` reads, asked
#: ``take(value, written, tail)``: True when it takes the document there (checked it and
#: found it valid), and :meth:`TailMemo.read` then returns ``TAKEN``, so that
#: :func:`~kernelindex_sdk.reading.intake.jsonl.jsonl_records` yields nothing for it. For a line
#: read with a tail, ``value`` holds only the head's members (the tail's are added after
#: a False, not before: most lines are taken, and the caller may add them itself if it
#: needs the whole); ``written`` is then None.
Take = Callable[[Any, bytes | None, SharedTail | None], bool]


class TailMemo:
    """Reads JSON Lines lines as :func:`~kernelindex_sdk.reading.intake.jsonl.jsonl_records` does,
    parsing only the head of a line whose tail it has seen (module docstring).

    ``keys`` name the members a shared tail starts with (a bundle's referenced records,
    in the order they are written): the tail of a line starts at the ``,`` before the
    key (``"name":``, looked for where the last tail found began, else the last one in
    the line) of the first of them found; a writer that puts a space before the colon
    gets no memo. Where to cut is only a guess (the parts' reads decide whether the cut
    holds), so a wrong guess costs time, never a verdict. A tail is remembered the
    second time it is seen, so a stream of distinct lines parses nothing twice. Looking
    for a tail that is not there costs each line a little, and finding one saves more
    than that: so the memo judges itself every :data:`_WINDOW_LINES` lines, and when
    fewer than one in :data:`_MIN_HIT_SHARE` found a tail or saw one again it reads
    lines whole for a while (a window, then twice as long each time it judges so again,
    up to :data:`_LONGEST_PAUSE`; that at once where almost no line holds any of the
    keys: a stream of records, not bundles).

    A memo lives as long as its reader's process (one a run, one a worker), while what
    is done with the documents it reads may change from one task to the next: that is
    the ``take`` each :meth:`read` is given.
    """

    def __init__(self, keys: Iterable[str]) -> None:
        # (With the colon: ``"`` ends every key of a JSON text, ``":`` fewer places, and
        # a backward search for it is faster than a forward one for ``"key"``.)
        self._markers = tuple(b'"' + key.encode() + b'":' for key in keys)
        self._tails: dict[bytes, SharedTail] = {}
        self._seen_once: set[bytes] = set()
        #: The bytes of the tails in each (kept within :data:`_TAIL_BYTES` and
        #: :data:`_SEEN_ONCE_BYTES`: a long line makes a long tail).
        self._tail_bytes = self._seen_once_bytes = 0
        #: The length of the last tail found (from its ``,``), and the key it began with.
        self._hint: tuple[int, bytes] = (0, b"")
        #: Lines left in the window being judged, the tails found or seen again in it,
        #: and its lines without any of the keys.
        self._left = _WINDOW_LINES if self._markers else 0
        self._hits = self._unmarked = 0
        #: Lines still to be read whole, and the next pause's length.
        self._paused = 0 if self._markers else -1
        self._pause = _WINDOW_LINES

    def read(self, raw: bytes, take: Take | None) -> Any:
        """``(value, written, tail)`` of one line as the strict intake reads it,
        ``FALLBACK`` where only the stdlib path can say, or ``TAKEN`` where ``take``
        took the document (:data:`Take`; None: nothing is taken).
        ``tail`` is the :class:`SharedTail` the value's last members are from (then
        ``written`` is None: no ``orjson.dumps`` of the whole value was made), or None
        when the line was read whole.

        (One function, the look for a tail written in it: this is every line's.)"""
        if self._paused:
            self._paused -= 1  # (from -1, without keys: never 0)
        else:
            self._left -= 1
            if not self._left:
                self._judge()
            # The tail: where the last one found began, its key first (most lines of a
            # stream are alike), a look at a few bytes there, else a search of the line.
            size = len(raw)
            length, marker = self._hint
            start = size - length
            at = raw.find(marker, start, start + _HINT_BYTES) if 0 < length < size else -1
            if at < 0:
                find = raw.rfind
                for marker in self._markers:
                    at = find(marker)
                    if at > 0:
                        break
                else:
                    self._unmarked += 1
            cut = raw.rfind(b",", 0, at) if at > 0 else -1
            if cut > 0:
                text = raw[cut:]
                tail = self._tails.get(text)
                if tail is None:
                    self._note(text)
                else:
                    head = fast_loads(raw[:cut] + b"}")
                    value = head[0] if head is not FALLBACK else None
                    if type(value) is dict and value and tail.keys.isdisjoint(value):
                        self._hits += 1
                        if size - cut != length or marker is not self._hint[1]:
                            self._hint = (size - cut, marker)
                        if take is not None and take(value, None, tail):
                            return TAKEN
                        value.update(tail.members)  # (again if take added them: the same)
                        return value, None, tail
        read = fast_loads(raw)
        if read is FALLBACK:
            return read
        value, written = read
        if take is not None and take(value, written, None):
            return TAKEN
        return value, written, None

    def _judge(self) -> None:
        """The end of a window: go on looking, or pause (class docstring)."""
        if self._unmarked * _MIN_HIT_SHARE >= (_MIN_HIT_SHARE - 1) * _WINDOW_LINES:
            # Lines without the keys at all (records, not bundles): the longest pause.
            self._paused = self._pause = _LONGEST_PAUSE
        elif self._hits * _MIN_HIT_SHARE < _WINDOW_LINES:
            self._paused = self._pause
            self._pause = min(2 * self._pause, _LONGEST_PAUSE)
        else:
            self._pause = _WINDOW_LINES
        self._left, self._hits, self._unmarked = _WINDOW_LINES, 0, 0

    def _note(self, text: bytes) -> None:
        """A tail seen: remembered (read on its own) the second time."""
        if text not in self._seen_once:
            if (
                len(self._seen_once) >= _SEEN_ONCE_KEPT
                or self._seen_once_bytes + len(text) > _SEEN_ONCE_BYTES
            ):
                self._seen_once.clear()
                self._seen_once_bytes = 0
            self._seen_once.add(text)
            self._seen_once_bytes += len(text)
            return
        self._seen_once.discard(text)
        self._hits += 1  # a tail that repeats: worth looking on
        read = fast_loads(b"{" + text[1:])
        if read is FALLBACK or type(read[0]) is not dict or not read[0]:
            return
        if len(self._tails) >= _TAILS_KEPT or self._tail_bytes + len(text) > _TAIL_BYTES:
            self._tails.clear()
            self._tail_bytes = 0
        self._tails[text] = SharedTail(text, read[0])
        self._tail_bytes += len(text)


#: Distinct tails remembered at once (then the memo starts again: memory stays flat).
_TAILS_KEPT = 1024

#: The bytes of the tails remembered at once (their members' objects take several times
#: as much): 2 MiB holds 1,700 tails of a protocol and an environment, or 32 tails of a
#: line at the 64 KiB limit.
_TAIL_BYTES = 2 << 20

#: How far from where the last tail began the key is looked for before the whole line.
_HINT_BYTES = 64

#: Distinct tails seen once and waiting for a second sighting.
_SEEN_ONCE_KEPT = 4096

#: The bytes of the tails seen once, kept at once.
_SEEN_ONCE_BYTES = 4 << 20

#: Lines between two judgements of whether tails repeat in this stream.
_WINDOW_LINES = 1024

#: The memo goes on looking only if at least one line in this many found its tail.
_MIN_HIT_SHARE = 8

#: The longest the memo reads lines whole before it looks for tails again.
_LONGEST_PAUSE = 64 * _WINDOW_LINES
