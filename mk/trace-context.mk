# --- W3C Trace Context harness (issue 20, item 5) ----------------------------
#
#   make test-trace-context   the public w3c/trace-context test harness
#                             (vendored at a pinned commit under
#                             tests/trace-context/harness, W3C 3-clause BSD)
#                             at STRICT_LEVEL=2 and SPEC_LEVEL=2 against
#                             tests/trace-context/service.mjs, a service built
#                             on the Node package's traceOf / traceHeaders;
#                             fails unless all 41 tests run and pass.
#
# It needs aiohttp (PyPI) in the venv and the built Node package, and runs in
# a few seconds, so it is part of `make test`. run.py bounds every wait (the
# service's "listening" line, the harness run, the service's stop); the
# harness's port is a free one picked just before it starts.

TRACE_CONTEXT := tests/trace-context

.PHONY: test-trace-context

test-trace-context: venv node-native node-ts ## W3C Trace Context harness (STRICT_LEVEL=2) vs a service on traceOf/traceHeaders
	$(VPY) -m pip install --quiet -r $(TRACE_CONTEXT)/requirements.txt
	$(BOUNDED) 5m $(VPY) $(TRACE_CONTEXT)/run.py

TEST_TARGETS += test-trace-context
