# --- Swift binding (issue 7) ------------------------------------------------
# The Swift package OrpcAgent (bindings-swift/) over the uniffi crate
# orpc-agent-swift. Swift runs natively where `swift` is on PATH, else in a
# Debian trixie chroot with Debian's swiftlang 6.0.3 (scripts/swift.sh;
# provisioned once, ~100 s, cached under $SWIFT_CHROOT or /srv/orpc-agent-swift).
# The Rust library is built on the host (the chroot has no Rust): a staticlib
# built against glibc 2.36 links fine in trixie (2.41). SwiftPM finds it
# through LIBRARY_PATH, pointed at a directory holding only the .a.

SWIFT_SH      := scripts/swift.sh
SWIFT_PKG     := bindings-swift
SWIFT_LIBDIR   = $(CURDIR)/target/swift-lib/$(1)

.PHONY: swift-lib swift-lib-release swift-package test-swift-package test-swift test-swift-6.2 bench-swift-6.2 test-swift-readme build-swift lint-swift fmt-swift demo-swift bench-swift swift-bindings

# swift-format (`swift format`, part of the Swift 6 toolchain; 600.0.0 in the
# chroot) with bindings-swift/.swift-format over OrpcAgent's hand-written
# sources, its tests, the bench and the example CLI: not the generated
# OrpcAgentFFI or Sources/OrpcAgent/Generated. Expanded inside swift.sh's
# shell, where Swift runs.
SWIFT_FORMAT_ON  := --configuration $(SWIFT_PKG)/.swift-format \$$(find $(SWIFT_PKG)/Sources/OrpcAgent $(SWIFT_PKG)/Tests $(SWIFT_PKG)/Bench examples/swift-cli/Sources \
                    -name '*.swift' -not -path '*/Generated/*' | sort)

# SwiftPM does not track a library found through LIBRARY_PATH: when the
# Rust library changes, the linked Swift products (test bundle, bench, the
# example CLI) are removed so the next build relinks them; otherwise a
# changed core would be tested through a stale link. The library is hard-
# linked, not copied (the debug one is ~230 MB; a CI run once ran out of
# disk copying it): cargo replaces its output rather than writing into it,
# so the staged link keeps the old bytes and `cmp` still sees a change.
define swift_stage_lib
	mkdir -p $(call SWIFT_LIBDIR,$(1))
	@cmp -s target/$(1)/liborpc_agent_swift.a $(call SWIFT_LIBDIR,$(1))/liborpc_agent_swift.a || { \
	  ln -f target/$(1)/liborpc_agent_swift.a $(call SWIFT_LIBDIR,$(1))/ && \
	  rm -rf $(SWIFT_PKG)/.build/*/$(1)/*.xctest $(SWIFT_PKG)/.build/*/$(1)/OrpcAgentBench \
	         $(SWIFT_PKG)/.build-6.2/*/$(1)/*.xctest $(SWIFT_PKG)/.build-6.2/*/$(1)/OrpcAgentBench \
	         examples/swift-cli/.build/*/$(1)/SwiftCLI examples/swift-cli/.build/*/$(1)/ReadmeQuickStart; }
endef

swift-lib: ## the Rust static library the Swift package links (debug)
	$(CARGO) build -q -p orpc-agent-swift
	$(call swift_stage_lib,debug)

swift-lib-release:
	$(CARGO) build -q --release -p orpc-agent-swift
	$(call swift_stage_lib,release)

swift-bindings: ## regenerate the committed uniffi Swift sources, header and module map
	$(SWIFT_PKG)/generate.sh

test-swift: swift-lib ## Swift: bindings drift check, then swift test (vectors, SI-1..12, drift, concurrency)
	$(CARGO) test -q -p orpc-agent-swift
	$(SWIFT_PKG)/generate.sh --check
	$(SWIFT_SH) run "cd $(SWIFT_PKG) && LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift build --build-tests -q && \
		LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) timeout --kill-after=30s 15m swift test --skip-build --disable-swift-testing"

# The same suite on Swift 6.2 (scripts/swift62.sh: a native swift ≥ 6.2,
# else Debian sid's swiftlang in a chroot; skipped, saying so, where a
# native Swift older than 6.2 is all there is), where the driver starts
# hooks with `Task.immediate`; its own build directory, .build-6.2.
# Debian's swiftlang 6.2.3 ships the _Testing_Foundation module without its
# library, which an XCTest bundle links: where the module has no library
# beside it, an empty stand-in (nothing in it is called) lets the link and
# the load succeed.
SWIFT62_SH   := scripts/swift62.sh
SWIFT62_STUB := $(CURDIR)/target/swift-6.2-stub

$(SWIFT62_STUB)/lib_Testing_Foundation.so:
	mkdir -p $(@D) && printf '' | cc -shared -x c - -o $@

test-swift-6.2: swift-lib $(SWIFT62_STUB)/lib_Testing_Foundation.so ## Swift: the suite again on Swift 6.2 (Task.immediate hooks)
	$(SWIFT62_SH) "swift --version 2>&1 | head -1 && cd $(SWIFT_PKG) && \
		export LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) && \
		lib=\$$(dirname \"\$$(readlink -f \"\$$(command -v swift)\")\")/../lib/swift/linux && \
		if [ -e \$$lib/_Testing_Foundation.swiftmodule ] && [ ! -e \$$lib/lib_Testing_Foundation.so ]; then \
			export LIBRARY_PATH=\$$LIBRARY_PATH:$(SWIFT62_STUB) LD_LIBRARY_PATH=$(SWIFT62_STUB); fi && \
		swift build --scratch-path .build-6.2 --build-tests -q && \
		timeout --kill-after=30s 15m swift test --scratch-path .build-6.2 --skip-build --disable-swift-testing"

test-swift-readme: swift-lib ## Swift: the README's quick start is examples/swift-cli's ReadmeQuickStart, and it prints what it says
	python3 tests/readme/swift_snippets.py source
	mkdir -p target
	$(SWIFT_SH) run "cd examples/swift-cli && LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift build -q --product ReadmeQuickStart && \
		timeout 120 .build/debug/ReadmeQuickStart > $(CURDIR)/target/swift-readme.out"
	python3 tests/readme/swift_snippets.py output target/swift-readme.out

swift-package: swift-lib-release ## Swift: the package as users add it, its Rust core a prebuilt artifact bundle, into target/swift-package (make release puts it in dist/swift)
	bash scripts/swift-package.sh $(CURDIR)/target/swift-package

test-swift-package: ## Swift: a new project adds that package by path (no Rust, no LIBRARY_PATH) and runs the README quick start; Swift 6.2 from Debian sid (not in make test)
	bash scripts/test-swift-package.sh

build-swift: swift-lib ## Swift: build the package and the example CLI
	$(SWIFT_SH) run "cd $(SWIFT_PKG) && LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift build && cd ../examples/swift-cli && LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift build"

lint-swift: ## Swift: swift-format lint --strict, rustfmt + clippy for the uniffi crate (the 3-line bindgen crate only gets rustfmt: checking it would compile uniffi's CLI twice)
	$(SWIFT_SH) run "swift format lint --strict $(SWIFT_FORMAT_ON)"
	$(CARGO) fmt -p orpc-agent-swift -p orpc-agent-uniffi-bindgen -- --check
	$(CARGO) clippy -p orpc-agent-swift --all-targets -- -D warnings

fmt-swift:
	$(SWIFT_SH) run "swift format format -i $(SWIFT_FORMAT_ON)"

demo-swift: swift-lib ## Swift: the example CLI (two capabilities, an approval round trip)
	$(SWIFT_SH) run "cd examples/swift-cli && LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift run -q SwiftCLI"

bench-swift: swift-lib-release ## Swift: governed invoke vs a direct await of the closure (release)
	$(SWIFT_SH) run "cd $(SWIFT_PKG) && LIBRARY_PATH=$(call SWIFT_LIBDIR,release) swift run -q -c release OrpcAgentBench"

bench-swift-6.2: swift-lib-release ## Swift: the same benchmark on Swift 6.2 (Task.immediate hooks)
	$(SWIFT62_SH) "cd $(SWIFT_PKG) && LIBRARY_PATH=$(call SWIFT_LIBDIR,release) swift run -q -c release --scratch-path .build-6.2 OrpcAgentBench"

TEST_TARGETS  += test-swift test-swift-6.2 test-swift-readme
DEMO_TARGETS  += demo-swift
BENCH_TARGETS += bench-swift bench-swift-6.2
BUILD_TARGETS += build-swift
LINT_TARGETS  += lint-swift
FMT_TARGETS   += fmt-swift
