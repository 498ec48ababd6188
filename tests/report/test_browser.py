"""The site in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``.ci/run`` installs), driven by selenium, from ``file://``
with the network closed. Search for a theorem, open it, check that its statement was
laid out as MathML and that a proof step links to the step it used; save screenshots.

Screenshots go to the test's temporary folder, or to ``$VERIGRAD_SCREENSHOTS`` if set.
"""
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from verigrad.report.library_pages import step_anchor

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,1000"]


def _missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package (pip install selenium)"
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        return "Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
    return ""


@pytest.fixture(scope="module")
def browser():
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test needs {missing}; .ci/run installs it")
        pytest.skip(f"needs {missing}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="verigrad-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("VERIGRAD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)

    def save(driver, name):
        path = folder / f"{name}.png"
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(max(height, 600), 4000))
        assert driver.save_screenshot(str(path))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        driver.set_window_size(1280, 1000)
        return path
    return save


def test_search_open_a_theorem_see_its_math_and_follow_a_step(browser, site, theorem_records, shots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    rec = next(r for r in theorem_records if r.name == "matrix.trace_cyclic_three")
    browser.get(site.index.resolve().as_uri())
    assert browser.title.startswith("Theorems")
    assert len(browser.find_elements(By.CSS_SELECTOR, "a.theorem")) == len(theorem_records)

    box = browser.find_element(By.ID, "search")
    box.send_keys("no such theorem anywhere")
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results li.none"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#results a.hit")
    box.clear()
    box.send_keys("trace cyclic three")
    hits = WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results a.hit"))
    assert hits[0].text == rec.name
    assert all("trace" in h.text for h in hits)
    shots(browser, "search")
    box.send_keys(Keys.ENTER)                                  # Enter opens the first hit
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(f"{rec.name}.html"))

    # The statement: a MathML element the browser laid out as math, with the statement's symbols.
    math = browser.find_element(By.CSS_SELECTOR, "#statement + .statement math")
    assert browser.execute_script("return arguments[0] instanceof MathMLElement", math)
    box_ = math.rect
    assert box_["width"] > 100 and box_["height"] > 15
    symbols = set(re.findall(r"\b([A-Z])\[", rec.statement))
    assert symbols == {"A", "B", "C"}
    shown = set(browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('mi')).map(e => e.textContent)", math))
    assert symbols <= shown and "∑" in math.get_attribute("textContent")
    lowered = browser.execute_script("""
        const s = arguments[0].querySelector('msub');           // a subscript sits below its base
        const [base, sub] = s.children;
        return sub.getBoundingClientRect().bottom > base.getBoundingClientRect().bottom;""", math)
    assert lowered

    # A step that used an earlier one links to it; following the link targets that step.
    step = next(s for s in rec.steps if s.uses)
    used = step.uses[0]
    item = browser.find_element(By.CSS_SELECTOR, f'li.step[id="{step_anchor(step.label)}"]')
    link = item.find_element(By.CSS_SELECTOR, "a.use")
    assert link.text == used
    link.click()
    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return location.hash") != "")
    target = browser.execute_script("return document.querySelector(':target')")
    assert target.get_attribute("id") == step_anchor(used)
    assert target.find_element(By.CSS_SELECTOR, ".label").text == used
    assert target.find_elements(By.TAG_NAME, "math")
    shots(browser, "theorem")


def test_network_page_draws_its_blocks(browser, site, certificate_records, shots):
    from selenium.webdriver.common.by import By
    browser.get((site.root / "certificates.html").resolve().as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "a.certificate")
    assert [r.text for r in rows] == [r.name for r in certificate_records]
    next(r for r in rows if r.text == "mlp").click()
    svg = browser.find_element(By.CSS_SELECTOR, "svg.blocks")
    assert svg.rect["height"] > 200
    names = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('text.name')).map(e => e.textContent)", svg)
    assert names == ["x (input)", "flatten", "fc1: dense", "relu", "head: dense", "y (output)"]
    assert browser.find_element(By.CSS_SELECTOR, "#statement ~ .statement math").rect["width"] > 100
    shots(browser, "network")
