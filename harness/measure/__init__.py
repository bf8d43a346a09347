"""``compbench.measure`` — Measurement: what a replay spent and what it lost.

Tokens (``tokens``, ``correction``, ``token_fit``, ``calibrate``), windows and prices (``models``), the
prompt cache (``cache``), savings against ``none`` (``savings``, ``metrics``), facts and needs (``facts/``),
retention (``retention``) and the judged track (``judge``).
"""
