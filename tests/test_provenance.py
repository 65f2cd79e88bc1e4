"""transformer_lib.provenance: a rerun is exact on the file's machine kind, within the seeds' spread elsewhere."""

import pytest
import torch

from transformer_lib.provenance import check_rerun, machine_record, same_machine_kind, save_results

AMD = {"machine": "AMD EPYC, 2 cores, Linux 6.1", "cpu_capability": "AVX512", "python": "3.11.7 (main) [GCC]",
       "torch": "2.13.0+cpu"}
INTEL = {**AMD, "machine": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz, 2 cores, Linux 6.1"}


def test_machine_record_names_the_cpu_and_versions():
    record = machine_record()
    assert set(record) == {"machine", "cpu_capability", "python", "torch"}
    assert same_machine_kind(record)


def test_machine_record_is_read_back_by_a_weights_only_load(tmp_path):
    # torch.__version__ is a TorchVersion: saved as such, a weights_only load refuses the whole file.
    torch.save({**machine_record(), "weights": {"w": torch.zeros(2)}}, tmp_path / "w.pt")
    assert torch.load(tmp_path / "w.pt", weights_only=True)["torch"] == torch.__version__


def test_the_machine_kind_is_the_cpu_its_capability_and_the_versions():
    assert same_machine_kind(AMD, {**AMD, "machine": "AMD EPYC, 16 cores, Linux 5.4"})  # cores, kernel: same kind
    assert not same_machine_kind(AMD, INTEL)
    assert not same_machine_kind(AMD, {**AMD, "cpu_capability": "AVX2"})
    assert not same_machine_kind(AMD, {**AMD, "torch": "2.14.1"})
    assert not same_machine_kind(AMD, {**AMD, "python": "3.12.1 (main)"})
    old_file = {k: v for k, v in AMD.items() if k != "cpu_capability"}  # recorded before capabilities were
    assert same_machine_kind(old_file, AMD)


def test_the_same_kind_must_reproduce_the_file_exactly():
    check = check_rerun([2.5, 2.4], [2.5, 2.4], AMD, tolerance=0.1, why="twice the spread", here=AMD)
    assert check.passed and check.same_kind and check.tolerance == 0.0
    check = check_rerun([2.5, 2.4 + 1e-9], [2.5, 2.4], AMD, tolerance=0.1, why="twice the spread", here=AMD)
    assert not check.passed and "DOES NOT agree" in str(check)


def test_another_kind_agrees_within_the_tolerance_given():
    # The difference seen between an AMD EPYC and an Intel Xeon on the scaling grid: 0.0176 after 200 steps.
    check = check_rerun([2.5176, 2.4], [2.5, 2.4], AMD, tolerance=0.1, why="twice the spread (0.05)", here=INTEL)
    assert check.passed and not check.same_kind and check.tolerance == pytest.approx(0.1)
    assert "1.8e-02" in str(check) and "agrees" in str(check) and "twice the spread (0.05)" in str(check)
    assert not check_rerun([2.7, 2.4], [2.5, 2.4], AMD, tolerance=0.1, why="", here=INTEL).passed
    assert not check_rerun([float("nan")], [2.5], AMD, tolerance=0.1, why="", here=INTEL).passed


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="as many"):
        check_rerun([1.0], [1.0, 2.0], AMD, tolerance=0.1, why="")
    with pytest.raises(ValueError, match="tolerance must be a positive number, got 0.0"):
        check_rerun([1.0], [1.0], AMD, tolerance=0.0, why="")


def test_results_are_written_whole_and_read_back(tmp_path):
    save_results(tmp_path / "r.json", {"loss": 1.5, "runs": [1, 2]})
    save_results(tmp_path / "w.pt", {"w": torch.ones(3)})
    assert (tmp_path / "r.json").read_text(encoding="utf-8").endswith("\n")
    assert torch.load(tmp_path / "w.pt", weights_only=True)["w"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "w.pt"]  # no temporary file left behind

