"""``simhash dedupe --against REF``, what goes with it: decontamination, as evaluation sets
are kept out of training data. Every document within the threshold of a reference document is
flagged (and, with ``--kept``/``--dropped``, dropped as a near-duplicate of the reference
document it matches best); the reference's own documents are never flagged, kept or dropped,
and the documents are not compared with each other (a dedupe of its own does that).

REF is read as the input is: files and directories for files, records of the same kind (and
fields) for ``--texts`` and ``--vectors``; or an index (``simhash index add``), whose
fingerprints are compared by estimate. The run is :mod:`.decontaminating`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.cosines import Verify
from ..core.groups import Clustering
from ..core.vectorize import Weighting
from ..errors import UsageError
from ..io.opening import open_file
from ..io.sinks.formats import Format
from ..io.sources.fields import Fields
from .guard import Reads, refuse_output_over_input, refuse_overwrites, sidecars
from .settings import Input, Source

if TYPE_CHECKING:
    from .requests import DedupeRequest

__all__ = ["check_against", "is_index", "reference_source"]

_SQLITE = b"SQLite format 3\x00"

# What a dedupe may ask that --against does not do, by parameter.
_NOT_WITH_AGAINST = {
    "plan": "a plan acts on clusters of files",
    "report": "the report browses clusters",
    "index": "an index keeps a corpus to deduplicate",
    "audit": "an audit measures a dedupe's blocks",
    "max_distance": "candidates against a reference are every pair, or blocks",
    "minhash": "candidates against a reference are every pair, or blocks",
    "keep_by": "each flagged record is dropped: there is nothing to choose",
}


def is_index(path: str) -> bool:
    """Whether ``path`` is an SQLite database (an index made by ``simhash index add``)."""
    try:
        with open_file(path) as handle:
            return handle.read(len(_SQLITE)) == _SQLITE
    except OSError:
        return False


def check_against(request: DedupeRequest) -> None:
    """Refuse, before any work, what does not go with ``--against``.

    Raises:
        UsageError: an option for a dedupe of clusters, tf-idf (its weights would come from
            each set alone), an index without ``--verify estimate``, or fingerprints.
    """
    assert request.against is not None
    for name, why in _NOT_WITH_AGAINST.items():
        if getattr(request, name) not in (None, False):
            raise UsageError(
                f"{{against}} goes without {{{name}}}: {why}", parameters=("against", name)
            )
    if request.keep is not None:
        raise UsageError(
            "{against} goes without {keep}: each flagged record is dropped",
            parameters=("against", "keep"),
        )
    if request.output.format is Format.GROUPS or request.output.listing is not None:
        raise UsageError(
            "{against} lists the pairs of a document and a reference document, not clusters: "
            "give {format} table, json, jsonl or csv, without {list}",
            parameters=("against", "format", "list"),
        )
    if request.clustering is not Clustering.REPRESENTATIVE:
        raise UsageError(
            "{against} goes without {clustering}: it makes no clusters",
            parameters=("against", "clustering"),
        )
    if request.reading.weighting is Weighting.TFIDF:
        raise UsageError(
            "{against} goes without {weighting} tfidf: its weights would come from each set "
            "alone, and the two would not compare",
            parameters=("against", "weighting"),
        )
    if request.source.kind is Input.FINGERPRINTS:
        raise UsageError(
            "{against} compares texts, files or vectors with a reference: give {texts}, "
            "{vectors} or PATHs",
            parameters=("against", "texts", "vectors"),
        )
    named = request.against_text_field or request.against_id_field is not None
    if named and is_index(request.against):
        raise UsageError(
            f"{request.against} is an index: it has no fields to name",
            parameters=("against_text_field", "against_id_field"),
        )
    if is_index(request.against):
        if request.verification is Verify.EXACT:
            raise UsageError(
                f"{request.against} is an index: it holds fingerprints, not vectors, so give "
                "{verify} estimate",
                parameters=("verify",),
            )
        refuse_overwrites(request.outputs, Reads(files=sidecars(request.against)))
    else:
        refuse_output_over_input(reference_source(request), request.outputs)


def reference_source(request: DedupeRequest) -> Source:
    """REF read as the input is read: paths, or records of the input's kind, with the
    input's fields unless REF's own are named.

    Raises:
        UsageError: fields of REF named for files, or REF's text field for vectors.
    """
    assert request.against is not None
    source = request.source
    named = request.against_text_field or request.against_id_field is not None
    if source.kind is Input.PATHS:
        if named:
            raise UsageError(
                "{against_text_field} and {against_id_field} name the fields of REF's records; "
                "files have none",
                parameters=("against_text_field", "against_id_field"),
            )
        return Source(Input.PATHS, (request.against,), skip_bad_lines=source.skip_bad_lines)
    fields = source.fields
    if named:
        fields = Fields.of(request.against_text_field, request.against_id_field)
        if request.against_text_field and source.kind is not Input.TEXTS:
            raise UsageError(
                "{against_text_field} names where REF's texts are; vectors have features",
                parameters=("against_text_field",),
            )
    return Source(source.kind, (), request.against, source.skip_bad_lines, fields)
