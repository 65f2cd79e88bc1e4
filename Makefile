# One entry point. `make book` and `make test` work from a fresh clone: each creates .venv
# when missing and installs the exact versions pinned in constraints.txt.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8000
# Jupyter kernels ("python3") and nbgrader's database migrations (alembic) are found on PATH.
export PATH := $(BIN):$(PATH)
export PYTHONHASHSEED := 0

.PHONY: book test test-deep check release student serve lock grade clean wipe-grading help
.DEFAULT_GOAL := help

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(STAMP): pyproject.toml constraints.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[course,peer,dev]'
	@touch $(STAMP)

book: $(STAMP)  ## build the book into _build/html (warnings are errors)
	$(BIN)/jupyter-book build --warningiserror --keep-going .

# Tests run in parallel (pytest-xdist), one worker per core; a module's tests stay on one worker
# (--dist loadscope), so that its module-scoped fixtures are built once, except that the nbgrader
# round trips are shared out by assignment (tests/conftest.py). TEST_JOBS=0: one process.
# The book is built once: `make book` (warnings are errors) just before the tests, which then
# read that build (COURSE_BOOK_BUILT=1); tests/test_book.py run alone builds it itself.
# Tests marked busy_machine load every core on purpose: they run after the parallel run, alone, so that
# the other tests' time limits never meet their load. Both runs always run; either failing fails (pytest's
# 5, "no test selected", as when PYTEST_ARGS picks tests of one kind only, does not).
# Tests marked deep (long searches, sweeps of every assignment) are make test-deep's: before a term, after a
# change to grading, the checker or the bridge, and before handing work over. make test (CI) leaves them out.
TEST_JOBS ?= auto
define run_tests
	@status=0; \
	run() { echo "pytest $$* $(PYTEST_ARGS)"; COURSE_BOOK_BUILT=1 $(BIN)/python -m pytest "$$@" $(PYTEST_ARGS); \
	        code=$$?; [ $$code -eq 0 ] || [ $$code -eq 5 ] || status=$$code; }; \
	run -n $(TEST_JOBS) --dist loadscope -m "($(1)) and not busy_machine"; \
	run -m "($(1)) and busy_machine"; \
	exit $$status
endef
test: book  ## run the test suite CI runs (builds the book first, incrementally; leaves out the deep tests)
	$(call run_tests,not deep)

test-deep: book  ## run the deep tests: every mutant, every assignment's round trip and attacks, the student's venv
	$(call run_tests,deep)

check: $(STAMP)  ## after every change: ruff, then the fast tests (not marked slow), in parallel
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadscope -m "not slow" $(PYTEST_ARGS)

# make release [A=ch01_tokens] [ARGS=--force]: an assignment whose source has not changed is skipped.
release: $(STAMP)  ## lint, regenerate notebooks/ (all, or A=<id>), fail unless the model solution earns every point
	$(BIN)/python -m coursetools.authoring.lint $(A)
	$(BIN)/python -m coursetools.authoring.release $(A) $(ARGS)

student: release  ## build the student edition: dist/student/ and dist/student.zip (BOOK_URL=... names the book)
	$(BIN)/python -m coursetools.authoring.student $(if $(BOOK_URL),--book-url $(BOOK_URL))

serve:  ## serve the built book on http://127.0.0.1:$(PORT)
	@test -f _build/html/index.html || { echo "no book yet: run 'make book' first"; exit 1; }
	$(PYTHON) -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

lock: $(STAMP)  ## re-pin constraints.txt from the current environment
	{ sed -n '1,2p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' | sort -f; } > constraints.tmp && mv constraints.tmp constraints.txt

# Grading outputs that the next `make grade/feedback/report` makes again. Kept: the gradebook (hand
# grades), its backups, the submissions, each student's recorded outcome and the roster.
REGENERATED := $(addprefix grading/,autograded feedback exports reports logs release)
clean:  ## remove the built book, the student edition and regenerable grading outputs (keeps hand grades)
	rm -rf _build dist build $(REGENERATED)

wipe-grading:  ## delete ALL of grading/: gradebook, hand grades, backups, submissions (needs CONFIRM=yes)
	@test "$(CONFIRM)" = yes || { echo "this deletes every grade, hand grades and backups included: make wipe-grading CONFIRM=yes"; exit 1; }
	rm -rf grading

# --- grading a class (coursetools/cli.py; everything under grading/) -------------------------
# make grade A=ch01_tokens [FROM=folder | ZIP=lms.zip] [DUE=2026-01-12T23:59] [TIMES=times.csv] [ARGS="--force --student jdoe"]
# COURSE=path grades another course directory than this one.
.PHONY: feedback report review
COURSE_CLI = $(BIN)/python -m coursetools.cli $(if $(COURSE),--root $(COURSE))
NEEDS_A = @test -n "$(A)" || { echo "name the assignment: make $@ A=<id> (the ids are the folders of solutions/)"; exit 2; }
grade: $(STAMP)  ## autograde assignment A (collect FROM=folder or ZIP=lms.zip first when given)
	$(NEEDS_A)
	$(COURSE_CLI) grade $(A) $(if $(FROM),--from $(FROM)) $(if $(ZIP),--zip $(ZIP)) $(if $(DUE),--due $(DUE)) $(if $(TIMES),--times $(TIMES)) $(ARGS)

feedback: $(STAMP)  ## feedback HTML for assignment A, without hidden tests (refused while hand grading is pending)
	$(NEEDS_A)
	$(COURSE_CLI) feedback $(A) $(ARGS)

# make review A=ch01_tokens S=jdoe CLEAR="the edit was a blank line" (or KEEP="replaced the test")
review: $(STAMP)  ## record your review of flagged student S: CLEAR="note" (the flag was wrong) or KEEP="note"
	$(NEEDS_A)
	@test -n "$(S)" -a -n "$(CLEAR)$(KEEP)" || { echo 'make review A=<id> S=<student> CLEAR="why the flag was wrong" (or KEEP="what you found")'; exit 2; }
	$(COURSE_CLI) review $(A) $(S) $(if $(CLEAR),--clear "$(CLEAR)",--keep "$(KEEP)")

report: $(STAMP)  ## CSV exports, LMS uploads and the class report for assignment A (ARGS="--canvas-column '...' --late-penalty '10%/day, max 50%'")
	$(NEEDS_A)
	$(COURSE_CLI) report $(A) $(ARGS)

# nbgrader finds nbgrader_config.py in the folder Jupyter starts in. FORMGRADER_PORT=... to change.
# As root (a container), Jupyter refuses to start without --allow-root; the server listens on
# 127.0.0.1 only and asks for its token, so no other machine reaches it either way (README).
FORMGRADER_PORT ?= 8888
FORMGRADER_AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
.PHONY: formgrader
formgrader: $(STAMP)  ## hand grading: JupyterLab with nbgrader's formgrader (menu Nbgrader > Formgrader)
	@mkdir -p grading/exchange
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(FORMGRADER_PORT) --ServerApp.root_dir=$(CURDIR) \
		$(FORMGRADER_AS_ROOT)
