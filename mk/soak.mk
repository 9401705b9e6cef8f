# --- Soak (issue 10, item 3) ------------------------------------------------
# One million mixed governed invocations (ok, invalid input, policy denied,
# approval round trips, timeouts, handler errors) through each binding, with
# RSS sampled after warm-up and at the end and the leak checks of
# bench/soak/README.md. Not part of `make test`: the short versions run in
# test-node (test/hardening/soak.test.mjs) and test-python
# (tests/test_hardening_soak.py). Debug builds, like the tests: the soak
# hunts leaks, not speed. SOAK_N changes the count.
SOAK_N ?= 1000000

.PHONY: soak soak-node soak-python

soak: soak-node soak-python ## one million governed invocations per binding, leak checks and RSS bound

soak-node: node-native node-ts ## Node soak: one million mixed invocations
	node bench/soak/node.mjs $(SOAK_N)

soak-python: python-develop ## Python soak: one million mixed invocations
	$(VPY) bench/soak/python.py $(SOAK_N)
