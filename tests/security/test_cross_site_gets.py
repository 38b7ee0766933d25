"""Issue 51.3: a link (a GET any page elsewhere can make the browser send) does not start
expensive work: the generated-words retrievers switched on by its settings, or an evaluation
of the test split with settings other than the index's own. Those need this server's token,
which the page's own forms carry and another site cannot read; the index's own settings, and
settings that cost no more than a question, stay linkable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.demo import demo_docs

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from glassrag.retrieve import generated  # noqa: E402
from glassrag.web.server import create_app  # noqa: E402

HYDE = {"q": "What does E-4107 mean?", "role.bm25-hyde": "fused", "retrieve.generated_tokens": "8"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    index = tmp_path_factory.mktemp("cross") / "demo"
    assert main(["ingest", str(demo_docs()), "--index", str(index)]) == 0
    return TestClient(create_app([index]), base_url="http://127.0.0.1")


def token_of(client: TestClient) -> str:
    """The token the ask page's own settings form carries."""
    found = re.search(r'name="token" value="([^"]+)"', client.get("/ask").text)
    assert found is not None
    return found.group(1)


def test_a_link_does_not_switch_on_the_generated_words_retrievers(client: TestClient) -> None:
    before = dict(generated._WRITTEN)
    answer = client.get("/ask.json", params=HYDE)
    assert answer.status_code == 403
    assert "a link (GET) does not start the generated-words retrievers" in answer.json()["error"]
    assert generated._WRITTEN == before  # nothing was generated
    forged = client.get("/ask.json", params={**HYDE, "token": "guessed"})
    assert forged.status_code == 403


def test_the_pages_own_form_still_can(client: TestClient) -> None:
    from glassrag.config import Config

    if generated.unavailable(Config()):
        pytest.skip("the bundled generator is not installed: the form does not offer bm25-hyde")
    answer = client.get("/ask.json", params={**HYDE, "token": token_of(client)})
    assert answer.status_code == 200, answer.text
    assert "bm25-hyde" in answer.json()["settings"]["config"]["retrieve"]["retrievers"]


def test_settings_that_cost_no_more_than_a_question_stay_linkable(client: TestClient) -> None:
    assert client.get("/ask.json", params={"q": "What does E-4107 mean?", "bm25.k1": "1.2"}).status_code == 200


def test_a_link_does_not_start_a_lab_evaluation_of_other_settings(client: TestClient) -> None:
    refused = client.get("/lab/losses.json", params={"k": "3", "gate": "off"})
    assert refused.status_code == 403
    assert "does not start an evaluation of the test split" in refused.json()["error"]
    assert client.get("/lab/losses.json").status_code == 200  # the index's own settings
    assert client.get("/lab/losses.json", params={"k": "3", "gate": "off", "token": token_of(client)}).status_code == 200


def test_the_lab_form_leads_to_its_page(client: TestClient) -> None:
    token = token_of(client)
    posted = client.post("/lab/losses", data={"token": token, "k": "4", "budget": "300", "gate": "on",
                                              "rerank": "auto"},
                         headers={"origin": "http://127.0.0.1"}, follow_redirects=False)
    assert posted.status_code == 303 and f"token={token}" in posted.headers["location"]
    assert client.get(posted.headers["location"]).status_code == 200


# each exhibit: settings whose change evaluates a split (token needed), and settings that cost one
# question or only choose what is drawn (linkable); lsa has none of the first kind (0.13 s at most)
COSTLY = [("cuts", {"overlap": "7"}), ("cuts", {"split": "test"}), ("bm25", {"k1": "0.7", "b": "0.3"}),
          ("bm25", {"commit": "1"}), ("fusion", {"k": "10", "w": "0.3"}), ("rerank", {"l2": "0.5"})]
CHEAP = [("cuts", {"doc": ""}), ("bm25", {"q": "reset the pump"}), ("lsa", {"dims": "5", "word": "pump"}),
         ("fusion", {"depth": "3"}), ("rerank", {"mmr": "0.5", "split": "test"})]


@pytest.mark.parametrize(("exhibit", "params"), COSTLY, ids=[f"{e}-{'-'.join(p)}" for e, p in COSTLY])
def test_a_link_does_not_start_an_exhibits_evaluation_of_other_settings(client: TestClient, exhibit: str,
                                                                         params: dict[str, str]) -> None:
    refused = client.get(f"/lab/{exhibit}.json", params=params)
    assert refused.status_code == 403, refused.text
    assert "a link (GET) does not start an evaluation of" in refused.json()["error"]
    assert client.get(f"/lab/{exhibit}", params=params).status_code == 403  # the page as well as its twin
    assert client.get(f"/lab/{exhibit}.json", params={**params, "token": "guessed"}).status_code == 403
    assert client.get(f"/lab/{exhibit}.json", params={**params, "token": token_of(client)}).status_code == 200


@pytest.mark.parametrize(("exhibit", "params"), CHEAP, ids=[f"{e}-{'-'.join(p)}" for e, p in CHEAP])
def test_an_exhibits_own_settings_and_one_questions_worth_stay_linkable(client: TestClient, exhibit: str,
                                                                          params: dict[str, str]) -> None:
    assert client.get(f"/lab/{exhibit}.json").status_code == 200
    assert client.get(f"/lab/{exhibit}.json", params=params).status_code == 200


@pytest.mark.parametrize("exhibit", ["cuts", "bm25", "lsa", "fusion", "rerank"])
def test_each_exhibits_form_carries_the_token(client: TestClient, exhibit: str) -> None:
    page = client.get(f"/lab/{exhibit}").text
    form = page[page.index('<form class="lab-form"'):]
    form = form[:form.index("</form>")]
    assert f'name="token" value="{token_of(client)}"' in form
