"""What ingest worked out for each text in the last build, kept so that adding papers repairs only
the new texts: each text's repaired form and the repairs made (for texts whose repair
does not depend on the corpus), and the corpus vocabulary with the texts it counts.

Kept in `<output>/.ingest/texts.parquet` (key, times counted in the vocabulary, whether its repair
is kept, the repaired text where it differs, the repairs made) and `vocabulary.parquet` (word,
count), stamped with a fingerprint of the repair code, this module and ftfy's version: other
code, an unreadable file or a vocabulary that counts a text no longer in the inputs means working
it out again (and saying so). Kept, not derived from the last documents.parquet: that holds
repaired texts only.

A text's repair depends on the vocabulary only where the repair looked a word up in it (a line
break or a flattened one, `varia- tional`: hyphens.py); those texts are repaired on every build, as
the vocabulary may have changed. Most texts are their own repair: for them only the key is kept.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.stages.ingest import hyphens, repair

log = logging.getLogger("pipeline.ingest")

FOLDER = ".ingest"
TEXTS, VOCABULARY = "texts.parquet", "vocabulary.parquet"
VERSION_KEY = b"repair_version"


def repair_version() -> str:
    """The fingerprint of what decides a repair and how it is kept: the repair code, this
    module and ftfy's version."""
    digest = hashlib.sha256(version("ftfy").encode())
    for path in (repair.__file__, hyphens.__file__, __file__):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


class Watched(Mapping):
    """A vocabulary that notes whether a word was looked up in it since `looked` was reset."""

    def __init__(self, words: Mapping[str, int]):
        self.words, self.looked = words, False

    def __getitem__(self, word: str) -> int:
        self.looked = True
        return self.words[word]

    def get(self, word: str, default=None):
        self.looked = True
        return self.words.get(word, default)

    def __contains__(self, word: object) -> bool:
        self.looked = True
        return word in self.words

    def __iter__(self) -> Iterator[str]:
        return iter(self.words)

    def __len__(self) -> int:
        return len(self.words)


@dataclass
class Known:
    """A text's repair as worked out before (None: the text itself); the repairs it made as
    `_repairs_text` writes them."""

    repaired: str | None
    repairs: str = ""


@dataclass
class RepairMemo:
    """Repairs and vocabulary of the last build (`load`), and this build's (`save`)."""

    known: dict[str, Known] = field(default_factory=dict)
    vocabulary: Counter | None = None
    counted: Counter = field(default_factory=Counter)  # text keys the vocabulary counts
    used: dict[str, Known] = field(default_factory=dict)  # this build's, as they are asked for
    changed: bool = False

    keys: dict[str, str] = field(default_factory=dict)  # text -> its key, worked out once

    def key(self, text: str) -> str:
        """A hash of the text as read (lone surrogates included: raw JSON may hold them)."""
        if text not in self.keys:
            data = text.encode("utf-8", "surrogatepass")
            self.keys[text] = hashlib.sha256(data).hexdigest()[:32]
        return self.keys[text]

    def vocabulary_for(self, texts: list[str], count: Callable[[list[str]], Counter]) -> Counter:
        """The vocabulary of `texts` (`count` of them): the last one plus the texts added since,
        where it counts no text that has gone; else counted afresh."""
        keys = Counter(self.key(t) for t in texts)
        if self.vocabulary is None or self.counted - keys:
            vocabulary = count(texts)
        else:
            added, vocabulary, new = keys - self.counted, Counter(self.vocabulary), []
            for text in texts:  # each occurrence beyond those counted before, once
                if added[key := self.key(text)] > 0:
                    added[key] -= 1
                    new.append(text)
            vocabulary.update(count(new))
        self.changed |= keys != self.counted
        self.vocabulary, self.counted = vocabulary, keys
        return vocabulary

    def repair(
        self, raw: str, fix: Callable[[str, Counter], str], counts: Counter, vocabulary: Watched
    ) -> str:
        """`raw` repaired (`fix(raw, counts)`, which looks words up in `vocabulary`), as known
        where its repair looked up none; `counts` gains the repairs made either way."""
        key = self.key(raw)
        known = self.used.get(key) or self.known.get(key)
        if known is None:
            made: Counter = Counter()
            vocabulary.looked = False
            repaired = fix(raw, made)
            if vocabulary.looked:
                counts.update(made)
                return repaired
            same = repaired == raw
            known, self.changed = Known(None if same else repaired, _repairs_text(made)), True
        self.used[key] = known
        if known.repairs:
            counts.update(_repairs_of(known.repairs))
        return raw if known.repaired is None else known.repaired


def _repairs_text(repairs: Counter) -> str:
    return "\t".join(f"{name}={n}" for name, n in sorted(repairs.items()))


def _repairs_of(text: str) -> Counter:
    pairs = (item.rsplit("=", 1) for item in text.split("\t") if item)
    return Counter({name: int(n) for name, n in pairs})


def load(folder: Path) -> RepairMemo:
    """The memo kept in `folder`, or an empty one (with the reason logged) where none fits."""
    if not (folder / TEXTS).exists():
        return RepairMemo()
    try:
        texts, words = (pq.read_table(folder / name) for name in (TEXTS, VOCABULARY))
        stamp = (texts.schema.metadata or {}).get(VERSION_KEY, b"").decode()
        if stamp != repair_version():
            log.info("repairing every text: the repair code changed since %s was kept", folder)
            return RepairMemo()
        return _decoded(texts.to_pandas(), words)
    except (OSError, pa.ArrowException, KeyError, ValueError, TypeError) as exc:
        log.info("repairing every text: %s unreadable (%s)", folder, exc)
        return RepairMemo()


def _decoded(frame: pd.DataFrame, words: pa.Table) -> RepairMemo:
    held = frame[frame["kept"]]
    repaired = held["repaired"].astype(object).where(held["repaired"].notna(), None)
    known = {
        key: Known(text, made)
        for key, text, made in zip(held["key"], repaired, held["repairs"], strict=True)
    }
    counted = Counter(dict(zip(frame["key"], frame["counted"].astype(int), strict=True)))
    vocabulary = Counter(
        dict(zip(words["word"].to_pylist(), words["count"].to_pylist(), strict=True))
    )
    return RepairMemo(known, vocabulary if counted else None, +counted)


def save(memo: RepairMemo, folder: Path) -> None:
    """This build's repairs and vocabulary, written only when they changed."""
    if not memo.changed and set(memo.used) == set(memo.known):
        return
    keys = sorted(set(memo.used) | set(memo.counted))
    known = [memo.used.get(k) for k in keys]
    texts = pd.DataFrame(
        {
            "key": keys,
            "counted": [memo.counted.get(k, 0) for k in keys],
            "kept": [k is not None for k in known],
            "repaired": [k.repaired if k else None for k in known],
            "repairs": [k.repairs if k else "" for k in known],
        }
    )
    table = pa.Table.from_pandas(texts, preserve_index=False)
    table = table.replace_schema_metadata({VERSION_KEY: repair_version().encode()})
    vocabulary = memo.vocabulary or Counter()
    words = pa.table(
        {"word": list(vocabulary), "count": pa.array(list(vocabulary.values()), pa.int64())}
    )
    tables.atomic_write(folder / VOCABULARY, lambda tmp: pq.write_table(words, tmp))
    tables.atomic_write(folder / TEXTS, lambda tmp: pq.write_table(table, tmp))
