"""The shipped example study."""

from __future__ import annotations

import gzip

from raterstats.datasets import (
    DATASETS,
    clinical_qa_path,
    export_frame,
    load_clinical_qa,
    write_clinical_qa,
)
from raterstats.simulate import DEFAULT_SEED


def test_shipped_file_is_the_default_simulation(study):
    shipped = load_clinical_qa()
    assert study.config["random_seed"] == DEFAULT_SEED
    assert shipped.data.drop("source_row").equals(study.ratings.data.drop("source_row"))
    assert shipped.scales == study.ratings.scales


def test_shipped_file_is_reproducible_byte_for_byte(tmp_path):
    out = write_clinical_qa(tmp_path / "again.csv.gz")
    assert out.read_bytes() == clinical_qa_path().read_bytes()


def test_shipped_file_is_plain_csv_with_documented_columns(study):
    text = gzip.decompress(clinical_qa_path().read_bytes()).decode()
    header = text.splitlines()[0].split(",")
    assert header == export_frame(study.ratings).columns
    assert "MIT" in DATASETS["clinical_qa_study"].licence
