"""The dask engine (``--engine dask``) against the local engine, on a real local cluster.

One cluster of two worker processes on 127.0.0.1 serves the module; the kill test starts its
own. These tests need the ``distributed`` extra, which ``make test`` installs: they fail, never
skip, without it.
"""

from __future__ import annotations

import io
import itertools
import json
import logging
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import dask
import distributed
import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simhash_cli.app.dedupe.request import DedupeRequest
from simhash_cli.app.engine import refuse
from simhash_cli.app.files import corpus_from_paths
from simhash_cli.app.records import (
    corpus_from_fingerprints,
    corpus_from_text_records,
    corpus_from_vectors,
)
from simhash_cli.app.settings import Input, Source
from simhash_cli.core.clusters.cluster import clusters_of_labels
from simhash_cli.core.clusters.groups import Clustering
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import (
    Admission,
    Corpus,
    Settings,
    corpus_from_texts,
)
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.result import DedupeResult
from simhash_cli.core.search import allpairs, planner
from simhash_cli.core.text.vectorize import Weighting
from simhash_cli.core.verify.cosines import Verify
from simhash_cli.core.verify.verifier import sorted_pairs
from simhash_cli.engines.dask import cluster as dask_cluster
from simhash_cli.engines.dask import reading as dask_reading
from simhash_cli.engines.dask import search as dask_engine
from simhash_cli.engines.dask import tfidf
from simhash_cli.engines.dask.cluster import Cluster
from simhash_cli.engines.dask.engine import DaskEngine
from simhash_cli.errors import (
    ExitCode,
    InputError,
    MalformedLineError,
    PairBudgetError,
    ParameterError,
    PathNotFoundError,
    SettingsMismatchError,
    UsageError,
    WorkerLostError,
)
from simhash_cli.io.sinks import records as sink_records
from simhash_cli.io.sinks.dedupe import emit_dedupe
from simhash_cli.io.sinks.formats import Format, Listing
from simhash_cli.io.sources.files import ReadPolicy

from conftest import SAMPLE

# Functions of this module reach the workers by value (the workers cannot import tests/).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with dask_cluster.connect(workers=2) as connected:
        yield connected


def planted(n: int, *, hot: int = 0, seed: int = 1) -> Corpus:
    """n random 64-bit fingerprints, a tenth of them near copies (0 to 6 bits away) of
    others, and ``hot`` identical ones."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**64, size=(n, 1), dtype=np.uint64)
    for target in rng.choice(n, size=n // 10, replace=False):
        source = int(rng.integers(0, n))
        words[target] = words[source]
        for bit in rng.choice(64, size=int(rng.integers(0, 7)), replace=False):
            words[target, 0] ^= np.uint64(1) << np.uint64(bit)
    words[rng.choice(n, size=hot, replace=False)] = words[0]
    return Corpus([f"d{i}" for i in range(n)], words, np.ones(n, np.int64), Settings())


def assert_same(local: DedupeResult, dask_result: DedupeResult, *, exact: bool = False) -> None:
    assert dask_result.scheme == local.scheme
    assert np.array_equal(dask_result.pairs.pairs, local.pairs.pairs)
    assert np.array_equal(dask_result.pairs.hamming, local.pairs.hamming)
    assert np.array_equal(dask_result.pairs.estimated_cosine, local.pairs.estimated_cosine)
    if exact:  # one arithmetic on both engines: the same bits
        assert dask_result.pairs.cosine.tobytes() == local.pairs.cosine.tobytes()
    assert [c.tolist() for c in dask_result.clusters] == [c.tolist() for c in local.clusters]
    assert dask_result.candidates == local.candidates
    assert dask_result.gated_out == local.gated_out
    assert dask_result.expected_recall == local.expected_recall
    assert dask_result.corpus.ids == local.corpus.ids


def test_the_workers_are_two_processes_and_everything_listens_on_loopback(
    cluster: Cluster,
) -> None:
    pids = cluster.client.run(os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()
    assert all(address.startswith("tcp://127.0.0.1:") for address in pids)
    assert cluster.client.scheduler.address.startswith("tcp://127.0.0.1:")
    assert cluster.dashboard is not None and cluster.dashboard.startswith("http://127.0.0.1:")
    me = psutil.Process()
    listening = [
        connection.laddr
        for process in [me, *me.children(recursive=True)]
        for connection in process.net_connections(kind="inet")
        if connection.status == psutil.CONN_LISTEN
    ]
    assert listening
    assert {address.ip for address in listening} == {"127.0.0.1"}


CONFIGS = [
    DedupeConfig(blocks=4, verify=Verify.ESTIMATE),
    DedupeConfig(blocks=8, threshold=0.8, verify=Verify.ESTIMATE),
    DedupeConfig(blocks=1, verify=Verify.ESTIMATE),
    DedupeConfig(blocks=2, threshold=0.95, verify=Verify.ESTIMATE),
    DedupeConfig(max_distance=3, verify=Verify.ESTIMATE),
    DedupeConfig(max_distance=0, verify=Verify.ESTIMATE),
    DedupeConfig(verify=Verify.ESTIMATE),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.blocks}-{c.max_distance}")
def test_20000_planted_fingerprints_give_the_local_result(
    cluster: Cluster, config: DedupeConfig
) -> None:
    docs = planted(20_000)
    local = dedupe(docs, config)
    assert len(local.pairs) > 100
    assert_same(local, dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=3_000))


def test_a_hot_bucket_of_2000_identical_fingerprints_completes(cluster: Cluster) -> None:
    docs = planted(6_000, hot=2_000, seed=5)
    config = DedupeConfig(blocks=4, verify=Verify.ESTIMATE)
    local = dedupe(docs, config)
    found = dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=1_000)
    assert_same(local, found)
    assert max(len(members) for members in found.clusters) >= 2_000


def write_corpus(root: Path, groups: int) -> None:
    """Groups of documents around a text, each a few words changed (some pairs reach 0.9,
    some do not), exact copies, and files that are skipped."""
    rng = random.Random(11)
    words = [f"w{i}" for i in range(5_000)]
    root.mkdir()
    for group in range(groups):
        text = rng.sample(words, 80)
        for member in range(rng.randint(1, 4)):
            changed = list(text)
            for _ in range(rng.randint(0, 12)):
                changed[rng.randrange(80)] = rng.choice(words)
            (root / f"g{group:04}-{member}.txt").write_text(" ".join(changed))
        if group % 25 == 0:
            (root / f"g{group:04}-copy.txt").write_text(" ".join(text))
    (root / "empty.txt").write_text("")
    (root / "binary.bin").write_bytes(bytes(range(256)) * 4)


@pytest.mark.parametrize("verify", [Verify.EXACT, Verify.ESTIMATE])
def test_files_read_by_the_workers_give_the_local_result(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Verify
) -> None:
    """Relative paths too, from a working directory the workers do not share."""
    write_corpus(tmp_path / "c", 300)
    monkeypatch.chdir(tmp_path)
    assert str(tmp_path) not in cluster.client.run(os.getcwd).values()
    paths = ("c",)
    settings = Settings()
    config = DedupeConfig(blocks=8, threshold=0.8, verify=verify)
    local_docs = corpus_from_paths(paths)
    local = dedupe(local_docs, config)
    assert len(local.pairs) > 100
    found = dask_engine.dedupe_paths(
        cluster,
        paths,
        config,
        settings=settings,
        partition_files=100,
    )
    assert_same(local, found, exact=verify is Verify.EXACT)
    assert found.corpus.stamps is not None and local_docs.stamps is not None
    assert np.array_equal(found.corpus.stamps, local_docs.stamps)
    assert sorted(s.id for s in found.corpus.skipped) == sorted(s.id for s in local_docs.skipped)


def test_vectors_given_here_are_verified_exactly_on_the_cluster(cluster: Cluster) -> None:
    texts = [f"alpha beta gamma delta {i % 7} {i % 11} {i % 13}" for i in range(400)]
    docs = corpus_from_texts(texts)
    config = DedupeConfig(blocks=4, threshold=0.7)
    local = dedupe(docs, config)
    assert len(local.pairs) > 100
    assert_same(
        local, dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=64), exact=True
    )


def test_budgets_hold_on_the_cluster(cluster: Cluster) -> None:
    docs = planted(3_000, hot=500)
    config = DedupeConfig(blocks=4, verify=Verify.ESTIMATE, max_pairs=100)
    with pytest.raises(PairBudgetError):
        dedupe(docs, config)
    with pytest.raises(PairBudgetError, match="more than 100 pairs"):
        dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=500)


def test_what_the_engine_does_not_take_is_refused(cluster: Cluster) -> None:
    docs = planted(100)
    # What the engine does not do is declared once, by the engine, and refused before it starts.
    indexed = DedupeRequest(Source(Input.PATHS, (str(SAMPLE),)), index="x.db")
    with pytest.raises(UsageError, match="engine dask does not take index"):
        refuse("dask", DaskEngine.refused, indexed.needs())
    with pytest.raises(ParameterError, match="vectors"):
        dask_engine.dedupe_corpus(cluster, docs, DedupeConfig(verify=Verify.EXACT))
    with pytest.raises(ParameterError, match="tfidf"):
        dask_engine.dedupe_paths(
            cluster,
            (str(SAMPLE),),
            DedupeConfig(),
            settings=Settings(weighting=Weighting.TFIDF),
        )


def _die(*args: Any, **kwargs: Any) -> Any:
    os.kill(os.getpid(), 9)


def test_a_killed_worker_is_an_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every worker that takes the task is SIGKILLed: after the scheduler's allowed retry, the
    run stops with WorkerLostError."""
    monkeypatch.setattr(dask_reading, "_fingerprint_part", _die)
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        dask_cluster.connect(workers=2) as own,
        pytest.raises(WorkerLostError, match="worker died"),
    ):
        dask_engine.dedupe_paths(
            own,
            (str(SAMPLE),),
            DedupeConfig(),
            settings=Settings(),
            policy=ReadPolicy(),
        )


# ---------------------------------------------------------------- the command line


def simhash(
    *args: str, cwd: Path | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "simhash_cli", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=cwd, input=input
    )


def test_dedupe_engine_dask_prints_what_the_local_engine_prints(cluster: Cluster) -> None:
    # At the defaults, in every format, with an audit, and with a scheme named; on the running
    # cluster (a local cluster of its own is started once, below: each start takes seconds).
    address = cluster.client.scheduler.address
    for args in (["-f", "json"], ["-f", "jsonl"], ["-f", "csv"], ["-f", "groups"], ["--audit"]):
        here = simhash("dedupe", *args, str(SAMPLE))
        there = simhash("dedupe", *args, "--engine", "dask", "--scheduler", address, str(SAMPLE))
        assert there.returncode == here.returncode == ExitCode.OK, there.stderr
        assert there.stdout == here.stdout, args
    local = simhash("dedupe", "-f", "json", "--blocks", "16", str(SAMPLE))
    on_dask = simhash(
        "dedupe", "-f", "json", "--blocks", "16", "--engine", "dask", "--workers", "2", str(SAMPLE)
    )
    assert on_dask.returncode == local.returncode == ExitCode.OK, on_dask.stderr
    assert on_dask.stdout == local.stdout
    assert json.loads(on_dask.stdout)["pairs"]
    assert "dask: local cluster of 2 workers, dashboard http://127.0.0.1:" in on_dask.stderr
    # An existing cluster, by its scheduler's address.
    remote = simhash(
        "dedupe", "-f", "json", "--blocks", "16", "--engine", "dask", "--scheduler", address,
        str(SAMPLE),
    )  # fmt: skip
    assert remote.returncode == ExitCode.OK, remote.stderr
    assert remote.stdout == local.stdout
    assert f"dask: cluster at {address} of 2 workers" in remote.stderr


def test_fingerprint_and_index_add_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    address = cluster.client.scheduler.address
    shutil.copytree(SAMPLE, tmp_path / "sample")
    # A relative path, from a working directory the workers do not share.
    local = simhash("fingerprint", "sample", cwd=tmp_path)
    on_dask = simhash(
        "fingerprint", "--engine", "dask", "--scheduler", address, "sample", cwd=tmp_path
    )
    assert on_dask.returncode == ExitCode.OK, on_dask.stderr
    assert on_dask.stdout == local.stdout
    assert '"id": "sample/chess-openings.txt"' in local.stdout
    db = str(tmp_path / "i.db")
    added = simhash("index", "add", db, str(SAMPLE), "--engine", "dask", "--scheduler", address)
    assert added.returncode == ExitCode.OK, added.stderr
    assert "8 new" in added.stderr
    stored = simhash("index", "dedupe", db, "-f", "json")
    estimate = simhash("dedupe", "--verify", "estimate", "-f", "json", str(SAMPLE))
    assert json.loads(stored.stdout)["pairs"] == json.loads(estimate.stdout)["pairs"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dedupe", "--scheduler", "tcp://127.0.0.1:9", str(SAMPLE)], "goes with --engine dask"),
        (["fingerprint", "--workers", "2", str(SAMPLE)], "goes with --engine dask"),
        (["fingerprint", "--engine", "dask", "--weighting", "tfidf", str(SAMPLE)], "tfidf"),
        (
            [
                "index",
                "add",
                "x.db",
                "--engine",
                "dask",
                "--fingerprints",
                str(SAMPLE / "chess-openings.txt"),
            ],
            "--fingerprints",
        ),
        (
            [
                "dedupe",
                "--engine",
                "dask",
                "--fingerprints",
                str(SAMPLE / "chess-openings.txt"),
                "--ngram",
                "2",
            ],
            "do not apply to --fingerprints",
        ),
        (
            [
                "dedupe",
                "--engine",
                "dask",
                "--vectors",
                str(SAMPLE / "chess-openings.txt"),
                "--weighting",
                "binary",
            ],
            "fingerprinted exactly as given",
        ),
        (["dedupe", "--engine", "dask", "--texts", "missing.jsonl"], "no such file"),
    ],
)
def test_what_the_command_line_refuses(args: list[str], message: str) -> None:
    refused = simhash(*args)
    assert refused.returncode == ExitCode.USAGE
    assert message in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:9", "tcp://127.0.0.1", "nonsense"])
def test_an_unreachable_scheduler_is_one_line_and_exit_1(address: str) -> None:
    refused = simhash("dedupe", "--engine", "dask", "--scheduler", address, str(SAMPLE))
    assert refused.returncode == ExitCode.ERROR
    assert refused.stderr.startswith(f"Error: cannot reach the dask scheduler at {address}: ")
    assert len(refused.stderr.splitlines()) == 1


def test_a_cluster_without_workers_is_refused_not_waited_for() -> None:
    with distributed.LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=0, host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR
    ) as empty:
        refused = simhash(
            "dedupe", "--engine", "dask", "--scheduler", empty.scheduler_address, str(SAMPLE)
        )
    assert refused.returncode == ExitCode.ERROR
    assert (
        refused.stderr == f"Error: the dask cluster at {empty.scheduler_address} has no workers\n"
    )


@pytest.mark.parametrize("files", [0, 1])
def test_fewer_than_two_documents_give_the_local_result(
    cluster: Cluster, tmp_path: Path, files: int
) -> None:
    for number in range(files):
        (tmp_path / f"{number}.txt").write_text("just one document")
    (tmp_path / "empty.txt").write_text("")
    config = DedupeConfig()
    local = dedupe(corpus_from_paths((str(tmp_path),)), config)
    found = dask_engine.dedupe_paths(
        cluster,
        (str(tmp_path),),
        config,
        settings=Settings(),
    )
    assert found.config == local.config and found.scheme == local.scheme
    assert len(found.pairs) == 0 and found.clusters == []
    assert found.corpus.ids == local.corpus.ids
    assert found.corpus.skipped == local.corpus.skipped


# ---------------------------------------------------------------- records read by the workers


def write_text_records(path: Path, groups: int, *, seed: int = 3, prefix: str = "g") -> None:
    """{id, text} records in near-duplicate groups, with what a reader must get right: a BOM,
    CRLF line ends, blank lines, records without an id (named FILE:LINE)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3_000)]
    lines = []
    for group in range(groups):
        text = rng.sample(words, 60)
        for member in range(rng.randint(1, 3)):
            changed = list(text)
            for _ in range(rng.randint(0, 8)):
                changed[rng.randrange(60)] = rng.choice(words)
            record: dict[str, Any] = {"text": " ".join(changed)}
            if (group + member) % 7:
                record["id"] = f"{prefix}{group}-{member}"
            lines.append(json.dumps(record))
        if group % 10 == 0:
            lines.append("")
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")


def records_with_lines(source: Path, n_groups: int, replaced: dict[int, bytes]) -> None:
    """:func:`write_text_records`, then the lines at the (0-based) indices of ``replaced``
    replaced by their bytes."""
    write_text_records(source, n_groups)
    lines = source.read_bytes().split(b"\r\n")
    for index, line in replaced.items():
        lines[index] = line
    source.write_bytes(b"\r\n".join(lines))


def records_on_dask(
    cluster: Cluster, source: str, kind: str, config: DedupeConfig, **options: Any
) -> DedupeResult:
    settings = options.pop("settings", Settings())
    return dask_engine.dedupe_records(
        cluster, source, kind, config, settings=settings, block_bytes=4_000, **options
    )


@pytest.mark.parametrize("verify", [Verify.EXACT, Verify.ESTIMATE])
def test_text_records_read_in_blocks_give_the_local_result(
    cluster: Cluster, tmp_path: Path, verify: Verify
) -> None:
    source = tmp_path / "texts.jsonl"
    write_text_records(source, 200)
    assert source.stat().st_size > 20 * 4_000  # many blocks
    config = DedupeConfig(blocks=8, threshold=0.8, verify=verify)
    local = dedupe(corpus_from_text_records(str(source)), config)
    assert len(local.pairs) > 50
    assert any(":" in doc_id for doc_id in local.corpus.ids)  # FILE:LINE ids, line numbers count
    assert_same(
        local, records_on_dask(cluster, str(source), "texts", config), exact=verify is Verify.EXACT
    )


def test_vector_and_fingerprint_records_read_in_blocks_give_the_local_result(
    cluster: Cluster, tmp_path: Path
) -> None:
    texts = tmp_path / "texts.jsonl"
    write_text_records(texts, 150, seed=8)
    docs = corpus_from_text_records(str(texts))
    vectors = tmp_path / "vectors.jsonl"
    with vectors.open("w") as out:
        for row, doc_id in enumerate(docs.ids):
            assert docs.weights is not None
            line = docs.weights[[row]]
            features = {
                docs.features[c]: float(v) for c, v in zip(line.indices, line.data, strict=True)
            }
            out.write(json.dumps({"id": doc_id, "features": features}) + "\n")
    config = DedupeConfig(blocks=4, threshold=0.8)
    vector_settings = Settings.of_vectors()
    local = dedupe(corpus_from_vectors(str(vectors)), config)
    found = records_on_dask(cluster, str(vectors), "vectors", config, settings=vector_settings)
    assert_same(local, found, exact=True)
    fingerprints = tmp_path / "fps.jsonl"
    made = simhash("fingerprint", "--texts", str(texts), "-o", str(fingerprints))
    assert made.returncode == ExitCode.OK, made.stderr
    estimate = DedupeConfig(blocks=4, threshold=0.8, verify=Verify.ESTIMATE)
    local = dedupe(corpus_from_fingerprints(str(fingerprints)), estimate)
    assert_same(local, records_on_dask(cluster, str(fingerprints), "fingerprints", estimate))


def test_malformed_records_are_named_by_file_and_line_across_blocks(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = tmp_path / "texts.jsonl"
    records_with_lines(source, 200, {150: b"{not json", 230: b'{"id": "x", "text": 5}'})
    lines = source.read_bytes().split(b"\r\n")
    config = DedupeConfig(blocks=4)
    with pytest.raises(MalformedLineError, match=r"texts.jsonl:151: invalid JSON"):
        records_on_dask(cluster, str(source), "texts", config)
    events: list[Any] = []
    local_events: list[Any] = []
    local = dedupe(
        corpus_from_text_records(str(source), skip_bad_lines=True, on_event=local_events.append),
        config,
    )
    found = records_on_dask(
        cluster, str(source), "texts", config, skip_bad_lines=True, on_event=events.append
    )
    assert_same(local, found, exact=True)
    assert events == local_events and [e.id for e in events] == [f"{source}:151", f"{source}:231"]
    lines[300] = b'{"id": "y", "text": "caf\xe9"}'
    source.write_bytes(b"\r\n".join(lines))
    with pytest.raises(InputError, match=r"texts.jsonl:301: not UTF-8"):
        records_on_dask(cluster, str(source), "texts", config, skip_bad_lines=True)


def test_records_from_a_url_and_a_glob(cluster: Cluster, tmp_path: Path) -> None:
    write_text_records(tmp_path / "a.jsonl", 60, seed=1)
    write_text_records(tmp_path / "b.jsonl", 60, seed=2, prefix="h")
    config = DedupeConfig(blocks=4, threshold=0.8)
    local = dedupe(corpus_from_text_records(str(tmp_path / "a.jsonl")), config)
    by_url = records_on_dask(cluster, (tmp_path / "a.jsonl").as_uri(), "texts", config)
    assert np.array_equal(by_url.pairs.pairs, local.pairs.pairs)
    both = records_on_dask(cluster, str(tmp_path / "*.jsonl"), "texts", config)
    assert len(both.corpus) > len(local.corpus)
    assert any(doc_id.startswith(str(tmp_path / "b.jsonl") + ":") for doc_id in both.corpus.ids)


def test_fingerprint_records_must_agree(cluster: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "fps.jsonl"
    records = [
        {
            "id": f"d{i}",
            "fingerprint": f"{i:016x}",
            "bits": 64,
            "seed": 1 if i < 300 else 2,
            "tokenizer": "word",
            "weighting": "tf",
            "features": 3,
        }
        for i in range(400)
    ]
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    config = DedupeConfig(verify=Verify.ESTIMATE)
    with pytest.raises(SettingsMismatchError, match=r"seed=1 .* seed=2"):
        records_on_dask(cluster, str(source), "fingerprints", config)
    (tmp_path / "none.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="no fingerprint records"):
        records_on_dask(cluster, str(tmp_path / "none.jsonl"), "fingerprints", config)
    with pytest.raises(PathNotFoundError):
        records_on_dask(cluster, str(tmp_path / "missing.jsonl"), "fingerprints", config)


def test_dedupe_texts_on_the_command_line(cluster: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "texts.jsonl"
    write_text_records(source, 40)
    address = cluster.client.scheduler.address
    local = simhash("dedupe", "-f", "json", "--blocks", "16", "--texts", str(source))
    on_dask = simhash(
        "dedupe", "-f", "json", "--blocks", "16", "--texts", str(source), "--engine", "dask",
        "--scheduler", address,
    )  # fmt: skip
    assert on_dask.returncode == local.returncode == ExitCode.OK, on_dask.stderr
    assert on_dask.stdout == local.stdout
    # Left to choose, and with MinHash or every pair named: the local engine's answer, the
    # pilot made and the signatures made on the workers.
    for scheme in ([], ["--minhash", "16x8"], ["--blocks", "every"]):
        here = simhash("dedupe", "-f", "json", *scheme, "--texts", str(source))
        there = simhash(
            "dedupe", "-f", "json", *scheme, "--texts", str(source), "--engine", "dask",
            "--scheduler", address,
        )  # fmt: skip
        assert there.returncode == here.returncode == ExitCode.OK, there.stderr
        assert there.stdout == here.stdout, scheme
    missing = simhash(
        "dedupe", "--texts", str(tmp_path / "no.jsonl"), "--engine", "dask", "--scheduler", address
    )
    assert missing.returncode == ExitCode.USAGE
    assert missing.stderr == f"Error: no such file or directory: {tmp_path / 'no.jsonl'}\n"


def test_parquet_row_groups_on_the_cluster_give_the_local_result(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = tmp_path / "texts.jsonl"
    write_text_records(source, 120, seed=4)
    rows = [
        json.loads(line)
        for line in source.read_text(encoding="utf-8-sig").splitlines()
        if line.strip()
    ]
    table = pa.table({"id": [r.get("id") for r in rows], "text": [r["text"] for r in rows]})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=37)
    config = DedupeConfig(blocks=4, threshold=0.8)
    local = dedupe(corpus_from_text_records(str(tmp_path / "t.parquet")), config)
    assert len(local.pairs) > 20
    found = records_on_dask(cluster, str(tmp_path / "t.parquet"), "texts", config)
    assert_same(local, found, exact=True)
    assert any(doc_id.endswith("t.parquet:1") for doc_id in found.corpus.ids)  # FILE:ROW


def test_without_the_extra_the_engine_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with (
        pytest.raises(ParameterError, match=r"pip install 'simhash-cli\[distributed\]'"),
        dask_cluster.connect(workers=1),
    ):
        pass
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ParameterError, match=r"pip install 'simhash-cli\[parquet\]'"):
        corpus_from_text_records("any.parquet")


def test_past_the_client_pairs_they_stay_on_the_workers_and_give_the_same_output(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More pairs than CLIENT_PAIRS, verified by estimate: components found on the workers in
    rounds, pairs read back in order a chunk at a time; the output is the local engine's, byte
    for byte. (Verified exactly, the client verifies the candidates and holds the pairs, as
    the local engine does.)"""
    docs = planted(20_000, hot=150, seed=9)
    config = DedupeConfig(blocks=4, verify=Verify.ESTIMATE, group_pairs=0)
    # Pairs held on the workers are not closed over their groups (the summary says so): the
    # local engine without closing gives the same pairs.
    local = dedupe(docs, config)
    monkeypatch.setattr(dask_engine, "CLIENT_PAIRS", 10)
    monkeypatch.setattr(sink_records, "PAIR_CHUNK", 97)
    found = dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=3_000)
    assert isinstance(found.pairs, dask_engine.StreamedPairs)
    assert len(found.pairs) == len(local.pairs) > 100
    merged = sorted_pairs(list(found.pairs.chunks(53)))
    assert np.array_equal(merged.pairs, local.pairs.pairs)
    assert np.array_equal(merged.hamming, local.pairs.hamming)
    assert [c.tolist() for c in found.clusters] == [c.tolist() for c in local.clusters]
    for fmt, listing in itertools.product(
        (Format.JSON, Format.JSONL, Format.CSV, Format.GROUPS), Listing
    ):
        ours, theirs = io.StringIO(), io.StringIO()
        emit_dedupe(found, fmt, ours, listing)
        emit_dedupe(local, fmt, theirs, listing)
        assert ours.getvalue() == theirs.getvalue()


def test_components_in_rounds_follow_long_chains(cluster: Cluster) -> None:
    """A path of 3,000 documents (each a few bits from the next): one component, found in a
    few rounds thanks to pointer jumping, equal to scipy's on the client."""
    rng = np.random.default_rng(4)
    words = np.zeros((3_000, 1), np.uint64)
    value = int(rng.integers(0, 2**63))
    for row in range(3_000):
        value ^= 1 << int(rng.integers(0, 64))
        words[row, 0] = value
    order = rng.permutation(3_000)
    docs = Corpus(
        [f"d{i}" for i in range(3_000)], words[order], np.ones(3_000, np.int64), Settings()
    )
    config = DedupeConfig(
        max_distance=1,
        verify=Verify.ESTIMATE,
        threshold=0.5,
        clustering=Clustering.COMPONENTS,
        group_pairs=0,
    )
    local = dedupe(docs, config)
    found = dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=500)
    assert [c.tolist() for c in found.clusters] == [c.tolist() for c in local.clusters]
    labels = dask_engine._labels_in_rounds(
        cluster, [cluster.client.scatter(dask_engine.Found(local.pairs, 0, 0, 0))], len(docs)
    )
    assert [c.tolist() for c in clusters_of_labels(labels)] == [c.tolist() for c in local.clusters]


def test_an_id_given_in_two_blocks_is_refused_naming_both_lines(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = tmp_path / "texts.jsonl"
    records_with_lines(
        source,
        200,
        {10: b'{"id": "dup", "text": "one two three"}', 250: b'{"id": "dup", "text": "four"}'},
    )
    assert source.stat().st_size > 10 * 4_000  # the two lines are blocks apart
    with pytest.raises(MalformedLineError) as raised:
        records_on_dask(cluster, str(source), "texts", DedupeConfig(blocks=4))
    assert str(raised.value).startswith(f"{source}:251: the id 'dup' was already given at ")
    assert f"already given at {source}:11 " in str(raised.value)


def test_a_line_longer_than_max_bytes_is_passed_over_on_the_cluster(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = tmp_path / "texts.jsonl"
    huge = b'{"id": "huge", "text": "' + b"x" * 30_000 + b'"}'  # across several blocks
    records_with_lines(source, 100, {40: huge})
    config = DedupeConfig(blocks=4)
    with pytest.raises(MalformedLineError, match=r"texts.jsonl:41: longer than 10,000 char"):
        records_on_dask(cluster, str(source), "texts", config, max_line=10_000)
    events: list[Any] = []
    found = records_on_dask(
        cluster, str(source), "texts", config, max_line=10_000, skip_bad_lines=True,
        on_event=events.append,
    )  # fmt: skip
    assert [event.id for event in events] == [f"{source}:41"]
    local = dedupe(
        corpus_from_text_records(str(source), skip_bad_lines=True, max_line=10_000), config
    )
    assert_same(local, found, exact=True)


def test_the_defaults_print_the_local_bytes_where_the_planner_chooses_minhash(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records whose pilot draws a sample of anchors (its budget made small, as a large corpus
    makes it): copies that repeat a third of their words have the same word sets at tf
    cosine about 0.94, which MinHash finds for less than many fingerprint tables, so the
    planner prices on the pilot made on the workers and chooses MinHash, signed on the
    workers; every format prints the local engine's bytes."""
    rng = np.random.default_rng(6)
    vocabulary = np.array([f"w{k}" for k in range(3_000)])
    texts = []
    for _ in range(300):
        base = list(rng.choice(vocabulary, int(rng.integers(120, 250))))
        texts.append(" ".join(base))
        if rng.random() < 0.4:
            texts.append(" ".join(base + base[: len(base) // 3]))
    source = tmp_path / "prose.jsonl"
    source.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in enumerate(texts)))
    config = DedupeConfig()
    docs = corpus_from_text_records(str(source))
    assert docs.weights is not None
    monkeypatch.setattr(planner, "PILOT_WORK", allpairs.product_work(docs.weights) // 4)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", 0)  # one round, a sample
    monkeypatch.setattr(planner, "GROWN_WORK", 0)  # no floor of its own
    local = dedupe(docs, config)
    found = records_on_dask(cluster, str(source), "texts", config)
    assert local.scheme.rows is not None and local.pilot is not None  # MinHash, on a pilot
    assert not local.pilot.complete and local.pilot.usable and len(local.pairs) > 50
    for fmt, listing in itertools.product(
        (Format.JSON, Format.JSONL, Format.CSV, Format.GROUPS, Format.TABLE), Listing
    ):
        ours, theirs = io.StringIO(), io.StringIO()
        emit_dedupe(found, fmt, ours, listing)
        emit_dedupe(local, fmt, theirs, listing)
        assert ours.getvalue() == theirs.getvalue(), (fmt, listing)


def test_tfidf_is_weighted_over_the_whole_corpus_on_the_cluster(
    cluster: Cluster, tmp_path: Path
) -> None:
    """--weighting tfidf: the partitions counted, the document frequencies summed over them,
    each partition weighted and fingerprinted again: the local engine's fingerprints and
    output, to the bit, in partitions smaller than the corpus."""
    source = tmp_path / "texts.jsonl"
    write_text_records(source, 120)
    settings = Settings(weighting=Weighting.TFIDF)
    local = dedupe(corpus_from_text_records(str(source), settings), DedupeConfig(threshold=0.8))
    job_args = ["dedupe", "--texts", str(source), "--weighting", "tfidf", "--threshold", "0.8"]
    here = simhash(*job_args, "-f", "json")
    there = simhash(
        *job_args, "-f", "json", "--engine", "dask", "--scheduler", cluster.client.scheduler.address
    )
    assert there.returncode == here.returncode == ExitCode.OK, there.stderr
    assert there.stdout == here.stdout and len(local.pairs) > 20
    counted = dask_reading.read_records(
        cluster, str(source), "texts", settings=Settings(), keep_vectors=True, block_bytes=4_000
    )
    assert len(counted.parts) > 3  # weighted by the whole corpus, not by each partition
    found = tfidf.weighted(cluster, counted, settings, keep_vectors=False)
    assert np.array_equal(found.docs.fingerprints, local.corpus.fingerprints)


@pytest.mark.parametrize("verify", ["exact", "estimate"])
def test_empty_documents_and_standard_input_give_the_local_bytes_on_the_cluster(
    cluster: Cluster, tmp_path: Path, verify: str
) -> None:
    """--include-empty: files and records without a word are set aside on the workers, the
    others searched, the empty ones paired on the client: the local engine's bytes, with
    empty documents in several partitions. --texts by estimate plans on their vectors, as
    the local engine does (it chose MinHash where the cluster chose tables)."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    for k in range(5):
        (corpus / f"blank-{k}.txt").write_text(" \n" * k)
    records = tmp_path / "texts.jsonl"
    write_text_records(records, 60)
    with records.open("a") as out:
        out.writelines(json.dumps({"id": f"e{k}", "text": "  "}) + "\n" for k in range(4))
    address = cluster.client.scheduler.address
    for source in ([str(corpus)], ["--texts", str(records)]):
        args = ["dedupe", "--include-empty", "--verify", verify, "-f", "json", *source]
        here = simhash(*args)
        there = simhash(*args, "--engine", "dask", "--scheduler", address)
        assert there.returncode == here.returncode == ExitCode.OK, there.stderr
        assert there.stdout == here.stdout, source
        assert json.loads(here.stdout)["summary"]["empty_pairs"] > 5
    # A file on standard input is read here and sent, among the files the workers read.
    typed = (SAMPLE / "chess-openings.txt").read_text()
    args = ["dedupe", "--include-empty", "--verify", verify, "-f", "json", str(corpus), "-"]
    here = simhash(*args, input=typed)
    there = simhash(*args, "--engine", "dask", "--scheduler", address, input=typed)
    assert there.returncode == here.returncode == ExitCode.OK, there.stderr
    assert there.stdout == here.stdout and '"b": "-"' in here.stdout
    # In partitions smaller than the corpus: the empty ones spread over several.
    docs = corpus_from_text_records(str(records), admission=Admission(include_empty=True))
    config = DedupeConfig(verify=Verify(verify))
    found = dask_engine.dedupe_corpus(cluster, docs, config, partition_docs=16)
    local = dedupe(docs, config)
    assert found.empty_pairs == local.empty_pairs == 6
    assert np.array_equal(found.pairs.pairs, local.pairs.pairs)
