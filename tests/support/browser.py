"""Real headless Chromium (Debian's `chromium` + `chromium-driver`) driven through Selenium.

Every flag keeps the browser off the network and away from shared state: a fresh profile per
browser, no background networking, no component updates, no sync, no QUIC.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) when both are installed, else None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def require_chromium() -> None:
    """Skip a browser test where Chromium is missing; in CI (`CI` set) that is a failure:
    scripts/test.sh installs it there."""
    import pytest

    if chromium_paths() is not None:
        return
    reason = "chromium + chromium-driver not installed (scripts/test.sh installs them as root)"
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A headless Chromium with console and network (performance) logs enabled."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    paths = chromium_paths()
    if paths is None:
        raise RuntimeError("chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=paths[1]))
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()


def open_report(driver: Any, path: Path, fragment: str = "", timeout_s: float = 10.0) -> float:
    """Open the report from file:// and wait until its script is done; return seconds taken."""
    driver.get_log("performance")  # drop what the browser's own start page asked for
    driver.get_log("browser")
    started = time.monotonic()
    driver.get(path.resolve().as_uri() + fragment)
    while time.monotonic() - started < timeout_s:
        if driver.execute_script("return document.documentElement.dataset.ready === 'true'"):
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"the report never became ready; console: {console_messages(driver)}")


def page_totals(driver: Any) -> dict[str, int]:
    """The header's totals as the page shows them: {"all": n, "pass": n, "fail": n, ...}."""
    return driver.execute_script(
        "var out = {}; document.querySelectorAll('#totals li').forEach(function (li) {"
        " out[li.dataset.status || 'all'] = Number(li.dataset.count); }); return out;"
    )


def visible_rows(driver: Any) -> list[str]:
    """Names of the scenario rows the filters leave visible, in page order."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#scenario-list > li'))"
        ".filter(function (li) { return !li.hidden; })"
        ".map(function (li) { return li.querySelector('.name').textContent; })"
    )


def console_messages(driver: Any) -> list[dict[str, Any]]:
    return list(driver.get_log("browser"))


def network_requests(driver: Any) -> list[str]:
    """Every URL requested since the report was opened, the report's own file:// load aside
    (DevTools `Network.requestWillBeSent` events, plus the page's resource timing entries)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            params = message["params"]
            url = params["request"]["url"]
            if not (url.startswith("file:") and params.get("type") == "Document"):
                urls.append(url)
    urls += driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
    )
    return urls


def screenshot_variance(png: Path) -> float:
    """Variance of the grey levels of a PNG screenshot (0 for a blank page)."""
    pixels = _png_grey(png.read_bytes())
    mean = sum(pixels) / len(pixels)
    return sum((p - mean) ** 2 for p in pixels) / len(pixels)


def _png_grey(data: bytes) -> list[int]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) to grey levels."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"unexpected PNG format {depth}/{colour}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    grey: list[int] = []
    offset = 0
    for _ in range(height):
        kind = raw[offset]
        line = bytearray(raw[offset + 1 : offset + 1 + stride])
        offset += 1 + stride
        _unfilter(kind, line, previous, channels)
        # every 7th pixel is plenty for a variance and keeps pure-Python decoding quick
        for x in range(0, width, 7):
            r, g, b = line[x * channels : x * channels + 3]
            grey.append((r * 299 + g * 587 + b * 114) // 1000)
        previous = line
    return grey


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            corner = previous[i - bpp] if i >= bpp else 0
            guess = left + up - corner
            pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
            predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[i] = (line[i] + predictor) & 0xFF
