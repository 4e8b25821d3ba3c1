"""The values every command shares, each one typed object: how documents are read and
fingerprinted (:class:`Reading`), what is read (:class:`Source`), where the work runs
(:class:`EngineChoice`). Each states the rules about its own parts once; the requests of
commands' requests state the rules between them.

Messages name parameters as ``{name}`` (see :mod:`simhash_cli.errors`); the command line spells
them as its flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.corpus import DEFAULT_ADMISSION, Admission, Settings
from ..core.text.tokenizer import TokenizerConfig
from ..core.text.vectorize import Weighting
from ..core.threads import cores
from ..errors import ParameterError, UsageError
from ..io.sinks.formats import counted
from ..io.sources.fields import DEFAULT_FIELDS, Fields
from ..io.sources.files import DEFAULT_POLICY, STDIN, ReadPolicy, check_paths_exist
from ..io.sources.shards import is_glob, is_sharded, shards_of
from .choices import FINGERPRINT_SETTINGS, EngineName, Input, Memory

__all__ = [
    "FINGERPRINT_SETTINGS",
    "EngineChoice",
    "EngineName",
    "Input",
    "Memory",
    "Reading",
    "Source",
    "capped_jobs",
    "check_records",
    "default_jobs",
    "placeholders",
]


def default_jobs() -> int:
    """Processes that read and tokenize files unless asked: one per core this process may
    run on (its CPU affinity, which a container or ``taskset`` narrows)."""
    return cores()


def capped_jobs(
    jobs: int, noun: str = "job", used: tuple[str, str] = ("process", "processes")
) -> tuple[int, str | None]:
    """``jobs`` processes, at most one per core (more only compete for the same cores, each
    with its own memory), and what to tell the person when it was capped (``noun``: what was
    asked, ``used``: what runs, singular and plural)."""
    cores = default_jobs()
    if jobs <= cores:
        return jobs, None
    running = counted(cores, *used)
    return cores, f"{counted(jobs, noun)} asked, {counted(cores, 'core')} here: {running} used"


@dataclass(frozen=True)
class Reading:
    """How documents are read and become fingerprints.

    Attributes:
        settings: what the fingerprints of text read this way are made with (bits, seed,
            tokenizer, weighting): the one object that travels to the core.
        policy: how files are read (encoding, size limit, symbolic links).
        admission: which documents read become documents of the corpus (those without a
            token kept as empty documents, or not).
        jobs: processes that read and tokenize files.
        given: the parameters of :data:`FINGERPRINT_SETTINGS` the user named (an index or
            fingerprint records have settings of their own, which named ones must match).
    """

    settings: Settings = Settings()  # noqa: RUF009 (frozen, shared)
    policy: ReadPolicy = DEFAULT_POLICY
    admission: Admission = DEFAULT_ADMISSION
    jobs: int = field(default_factory=default_jobs)
    given: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.settings.tokenizer is None:
            raise ParameterError("a Reading reads text: its settings have a tokenizer")

    @property
    def bits(self) -> int:
        return self.settings.bits

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def tokenizer(self) -> TokenizerConfig:
        assert self.settings.tokenizer is not None  # (__post_init__)
        return self.settings.tokenizer

    @property
    def weighting(self) -> Weighting:
        assert self.settings.weighting is not None  # (__post_init__)
        return self.settings.weighting

    def adopting(self, settings: Settings) -> Reading:
        """This reading with another's settings (an index's, say): all of them for text, the
        bits and seed alone of given vectors (which have no tokenizer or weighting)."""
        if settings.tokenizer is None:
            settings = dataclasses.replace(self.settings, bits=settings.bits, seed=settings.seed)
        return dataclasses.replace(self, settings=settings)

    @property
    def vector_settings(self) -> Settings:
        """The settings of vectors fingerprinted exactly as given."""
        return Settings.of_vectors(self.bits, self.seed)

    def settings_for(self, kind: Input) -> Settings:
        """The settings of what ``kind`` reads: vectors as given, else text."""
        return self.vector_settings if kind is Input.VECTORS else self.settings

    @property
    def settings_given(self) -> bool:
        """Whether any setting that decides a fingerprint was named."""
        return bool(self.given)

    @property
    def reads_text_differently(self) -> bool:
        """Whether the tokenizer or the weighting is not the default (they apply to text)."""
        return self.tokenizer != TokenizerConfig() or self.weighting is not Weighting.TF

    def refuse_text_options(self, message: str) -> None:
        """Refuse a tokenizer or weighting for input they do not apply to.

        Raises:
            UsageError: ``message`` (one of ours, naming its parameters as ``{name}``), when
                they were not the defaults.
        """
        if self.reads_text_differently:
            raise UsageError(message, parameters=placeholders(message))

    def check_recorded(self, settings: Settings) -> None:
        """Refuse a named bits or seed that is not what fingerprint records were made with.

        Raises:
            UsageError: ``bits 32 does not match the fingerprints' 64``.
        """
        for name, asked, stored in (
            ("bits", self.bits, settings.bits),
            ("seed", self.seed, settings.seed),
        ):
            if name in self.given and asked != stored:
                raise UsageError(
                    f"{{{name}}} {asked} does not match the fingerprints' {stored}",
                    parameters=(name,),
                )


_RECORDS = (Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS)


@dataclass(frozen=True)
class Source:
    """What a command reads: paths, or one source of records.

    Attributes:
        kind: which input.
        paths: with :attr:`Input.PATHS`, the paths as given.
        location: with records, their file (``-`` for standard input; a glob or a URL for the
            dask engine).
        skip_bad_lines: a malformed record is skipped with a warning instead of stopping the run.
        fields: where the records' texts and ids are (``--text-field``, ``--id-field``).
    """

    kind: Input = Input.PATHS
    paths: tuple[str, ...] = ()
    location: str | None = None
    skip_bad_lines: bool = False
    fields: Fields = DEFAULT_FIELDS

    def __post_init__(self) -> None:
        if self.fields.text != DEFAULT_FIELDS.text and self.kind is not Input.TEXTS:
            raise UsageError(
                "{text_field} names where the text of {texts} records is",
                parameters=("text_field", "texts"),
            )
        if self.fields.id is not None and self.kind not in (Input.TEXTS, Input.VECTORS):
            raise UsageError(
                "{id_field} names where the id of {texts} or {vectors} records is",
                parameters=("id_field", "texts", "vectors"),
            )

    @classmethod
    def of(
        cls,
        paths: Sequence[str],
        records: dict[Input, str | None],
        *,
        skip_bad_lines: bool = False,
        fields: Fields = DEFAULT_FIELDS,
    ) -> Source:
        """The one input given: ``paths``, or one of ``records`` (by kind, None when not
        given; the kinds a command takes).

        Raises:
            UsageError: more than one input.
        """
        given = [(kind, where) for kind, where in records.items() if where is not None]
        if len(given) + bool(paths) > 1:
            message, names = _alternatives("give {}, one of them", list(records))
            raise UsageError(message, parameters=names)
        if given:
            kind, where = given[0]
            return cls(kind, (), where, skip_bad_lines, fields)
        return cls(Input.PATHS, tuple(paths), None, skip_bad_lines, fields)

    @property
    def is_records(self) -> bool:
        """Whether the input is records, not paths."""
        return self.kind is not Input.PATHS

    @property
    def empty(self) -> bool:
        """Whether nothing was given to read."""
        return self.kind is Input.PATHS and not self.paths

    @property
    def reads_stdin(self) -> bool:
        """Whether standard input is read: ``-`` among the paths, or records from ``-``."""
        return self.reads_stdin_path or (self.is_records and self.location == STDIN)

    @property
    def reads_stdin_path(self) -> bool:
        """Whether ``-`` is among the paths (a document read from standard input)."""
        return STDIN in self.paths

    @property
    def streamable(self) -> bool:
        """Whether files are read (not records), so fingerprints can come batch by batch."""
        return self.kind is Input.PATHS and bool(self.paths)

    def require(self, accepted: Sequence[Input], *, stdin: bool = True) -> None:
        """Refuse an empty source (``stdin``: whether ``-`` may be a path).

        Raises:
            UsageError: ``no input: give PATH... (- for standard input) or {vectors} FILE...``.
        """
        if self.empty:
            paths = "PATH... (- for standard input)" if stdin else "PATH..."
            message, names = _alternatives(f"no input: give {paths} or {{}}", accepted, files=True)
            raise UsageError(message, parameters=names)
        where = self.location
        if self.is_records and where is not None and "://" not in where and not is_glob(where):
            check_paths_exist([where])  # before anything is made (an index, an output)

    def input_paths(self) -> list[str]:
        """Every file read that could be written to by mistake (standard input excluded):
        the paths, or the records' file, or each of their shards."""
        if self.is_records and is_sharded(self.location):
            assert self.location is not None
            return shards_of(self.location)
        named = list(self.paths) if self.kind is Input.PATHS else [self.location or STDIN]
        return [path for path in named if path != STDIN]

    def input_trees(self) -> list[str]:
        """The directories read below: the paths (some may be files), or a directory of
        shards."""
        if self.kind is Input.PATHS:
            return [path for path in self.paths if path != STDIN]
        if self.location is not None and is_sharded(self.location) and not is_glob(self.location):
            return [self.location]
        return []


def _alternatives(
    template: str, kinds: Sequence[Input], *, files: bool = False
) -> tuple[str, tuple[str, ...]]:
    """``template`` with its ``{}`` filled by the inputs a command takes ("PATHs, {vectors}
    or {texts}"), and the parameters named."""
    names = tuple(kind.value for kind in kinds if kind in _RECORDS)
    if files:
        words = [f"{{{name}}} FILE" for name in names]
        return template.format(" / ".join(words)), names
    words = ["PATHs", *(f"{{{name}}}" for name in names)]
    return template.format(", ".join(words[:-1]) + " or " + words[-1]), names


VECTORS_AS_GIVEN = (
    "{vectors} are fingerprinted exactly as given; {ngram}, {char_ngrams} and {weighting} "
    "apply to text"
)


FINGERPRINTS_AS_MADE = (
    "{ngram}, {char_ngrams} and {weighting} do not apply to {fingerprints} "
    "(the records say how they were made)"
)


def check_records(source: Source, reading: Reading) -> None:
    """Records say some of their settings themselves: refuse options that would not apply."""
    if source.kind is Input.VECTORS:
        reading.refuse_text_options(VECTORS_AS_GIVEN)
    elif source.kind is Input.FINGERPRINTS:
        reading.refuse_text_options(FINGERPRINTS_AS_MADE)
    if source.kind in (Input.VECTORS, Input.FINGERPRINTS) and reading.admission.min_length:
        kind = source.kind.value
        raise UsageError(
            f"{{min_length}} counts the words of texts; {{{kind}}} have none",
            parameters=("min_length", kind),
        )


# Bytes of vectors (and of their making) per byte of records, as measured on prose (2.9 GB
# for 1.5 GB of JSON Lines); a compressed shard holds about four times its size.
VECTOR_BYTES_PER_BYTE = 2
COMPRESSED_RATIO = 4


@dataclass(frozen=True)
class EngineChoice:
    """Where the work runs.

    Attributes:
        name: the engine.
        scheduler: with dask, the address of an existing cluster's scheduler.
        workers: with dask and no scheduler, the worker processes of the local cluster.
    """

    name: EngineName = EngineName.LOCAL
    scheduler: str | None = None
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.name is EngineName.LOCAL:
            for name in ("scheduler", "workers"):
                if getattr(self, name) is not None:
                    raise UsageError(
                        f"{{{name}}} goes with {{engine}} dask", parameters=(name, "engine")
                    )
        elif self.scheduler is not None and self.workers is not None:
            raise UsageError(
                "{workers} starts a local cluster; it goes without {scheduler}",
                parameters=("workers", "scheduler"),
            )

    @property
    def is_dask(self) -> bool:
        """Whether the work runs on a Dask cluster."""
        return self.name is EngineName.DASK


def placeholders(text: str) -> tuple[str, ...]:
    """The ``{name}`` placeholders of a message of ours (never of a user's text)."""
    found: list[str] = []
    for piece in text.split("{")[1:]:
        name, _, _ = piece.partition("}")
        if name.isidentifier():
            found.append(name)
    return tuple(found)
