"""The ask page says, beside its "Write an answer" button, what the bundled 135M generator can
and cannot do, measured (issue 49, item 9); started with an endpoint (serve --generator URL),
it says nothing about a model it does not run."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette", reason="the web app needs the web extra: pip install 'glassrag[web]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient  # noqa: E402

from glassrag.store import EmbeddedStore  # noqa: E402
from glassrag.web.server import create_app  # noqa: E402
from tests.web.conftest import BASE_URL  # noqa: E402

ASK = "/ask?" + urlencode({"q": "What does E-4107 mean?"})


@pytest.fixture
def folder(index, tmp_path: Path) -> Path:
    """The handbook of tests/conftest.py, saved as a folder index."""
    target = tmp_path / "handbook"
    EmbeddedStore(target).write(index)
    return target


def test_the_button_says_what_the_bundled_model_can_do(folder: Path):
    page = TestClient(create_app([folder]), base_url=BASE_URL).get(ASK).text
    form = page[page.index('<form class="generate"'):]
    form = form[: form.index("</form>")]
    note = " ".join(re.sub(r"<[^>]+>", " ", form).split())
    assert 'id="generate"' in form and "SmolLM2-135M" in note
    assert "Measured on demo test questions" in note and "bench/generation_bundled.py" in note
    assert "--generator" in note  # what to do for a better answer


def test_no_note_when_an_endpoint_writes_the_answer(folder: Path):
    page = TestClient(create_app([folder], generator="http://127.0.0.1:9/v1"), base_url=BASE_URL).get(ASK).text
    assert 'id="generate"' in page and "SmolLM2-135M" not in page
