from gpuprof.advise.fixes import hdf5_chunk_cache
from tests.unit.fixes.cases import evidence, situation


def dataset(cache, reopened=False):
    return {"file": "data.h5", "dataset": "/images", "chunks": [64, 32, 32], "chunk_bytes": 65536,
            "rdcc_nbytes": cache, "rdcc_nslots": 521, "read_amplification": 64.0, "chunks_touched": 100,
            "reads": 100, "opens": 100 if reopened else 1, "reopened_per_read": reopened,
            "cache_holds_a_chunk": cache >= 65536}


def test_a_cache_smaller_than_a_chunk_gets_a_cache_of_a_batch_of_chunks():
    built = hdf5_chunk_cache.build(evidence(hdf5=[dataset(1024)]), situation())
    assert built["where"] == "data.h5:/images"
    assert built["change"]["hdf5_cache_bytes"] >= 32 * 65536 and built["change"]["hdf5_keep_handles"] is True
    assert "chunk cache 1024 B ->" in built["detail"] and "cannot hold one" in built["why"]


def test_a_data_set_opened_per_read_is_told_to_keep_its_handle_and_never_x_to_x():
    built = hdf5_chunk_cache.build(evidence(hdf5=[dataset(1 << 30, reopened=True)]), situation())
    assert "keep its handle" in built["detail"] and " B -> " not in built["detail"]
    assert "opened again for each read" in built["why"]
    assert built["change"]["hdf5_cache_bytes"] == 1 << 30


def test_right_cache_and_kept_handle_give_nothing_to_change():
    assert hdf5_chunk_cache.build(evidence(hdf5=[dataset(1 << 30)]), situation()) is None


def random_reads(**fields):
    """A data set of 16 chunks read in random order by one inline producer (10 s making batches)."""
    found = dict(dataset(4 * 65536), shape=[1024, 32, 32], **fields)
    loader = {"batch_size": 8, "sampler": "RandomSampler", "num_workers": 0, "producer": {"wall_s": 10.0}}
    return evidence(hdf5=[found], loader=loader)


def test_only_the_reads_timed_get_cheaper_and_the_rest_of_making_a_sample_stays():
    untimed = hdf5_chunk_cache.build(random_reads(), situation())
    most = hdf5_chunk_cache.build(random_reads(read_s=8.0), situation())
    little = hdf5_chunk_cache.build(random_reads(read_s=0.5), situation())
    assert little is None or little["estimated_speedup"] < most["estimated_speedup"]
    assert most["estimated_speedup"] <= untimed["estimated_speedup"]
    assert "the reads took 80% of the time making batches" in most["why"]


def test_the_cache_is_credited_only_with_the_hits_it_adds_to_those_it_gives_now():
    # A kept handle whose cache already holds 4 of the 16 chunks: the fix's 8 add a quarter of the reads.
    kept = hdf5_chunk_cache.hit_rate(4 * 65536, dict(dataset(0), shape=[1024, 32, 32]), True, kept=True)
    reopened = hdf5_chunk_cache.hit_rate(4 * 65536, dict(dataset(0), shape=[1024, 32, 32]), True, kept=False)
    assert kept == 0.25 and reopened == 0.0
    assert hdf5_chunk_cache.hit_rate(1024, dataset(0), False, kept=True) == 0.0     # cannot hold a chunk
