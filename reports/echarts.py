"""``compbench.reports.echarts`` — Apache ECharts, the report's charting library, embedded in every report (no network).

The build is vendored in ``reports/vendor`` (see its README: version, source, licences, how to
update); its checksum is verified before it goes into a report, so a report never carries a file
that differs from the published build.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from compbench.errors import CompbenchError

VERSION = "6.1.0"
SHA256 = "61f13280aba3161f77fc801bf5f9c786f55f10432153a0683fc5cc0700b013d5"
LICENCE = "Apache-2.0 (bundles ZRender and d3 code, BSD-3-Clause)"
VENDOR = Path(__file__).parent / "vendor"
FILE = VENDOR / f"echarts-{VERSION}.common.min.js"


def script() -> str:
    """The library's JavaScript, checked, ready to inline in a ``<script>`` element."""
    raw = FILE.read_bytes()
    if hashlib.sha256(raw).hexdigest() != SHA256:
        raise CompbenchError(f"{FILE} is not the published ECharts {VERSION} build (checksum differs)")
    text = raw.decode("utf-8")
    if "</script" in text.lower():  # cannot happen with this build; a future one must not end the element
        text = text.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    return text
