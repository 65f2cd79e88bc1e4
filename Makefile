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

.PHONY: book test check release student serve lock grade clean help
.DEFAULT_GOAL := help

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

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
TEST_JOBS ?= auto
test: book  ## run the whole test suite (builds the book first, incrementally)
	COURSE_BOOK_BUILT=1 $(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadscope $(PYTEST_ARGS)

check: $(STAMP)  ## after every change: ruff, then the fast tests (not marked slow), in parallel
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadscope -m "not slow" $(PYTEST_ARGS)

release: $(STAMP)  ## lint solutions/*/*.md, then regenerate notebooks/ from them with nbgrader
	$(BIN)/python -m coursetools.lint
	$(BIN)/python -m coursetools.release

student: release  ## build the student edition: dist/student/ and dist/student.zip
	$(BIN)/python -m coursetools.student

serve:  ## serve the built book on http://127.0.0.1:$(PORT)
	@test -f _build/html/index.html || { echo "no book yet: run 'make book' first"; exit 1; }
	$(PYTHON) -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

lock: $(STAMP)  ## re-pin constraints.txt from the current environment
	{ sed -n '1,2p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' | sort -f; } > constraints.tmp && mv constraints.tmp constraints.txt

clean:  ## remove the built book and grading outputs (keeps .venv)
	rm -rf _build grading dist

# --- grading a class (coursetools/cli.py; everything under grading/) -------------------------
# make grade A=ch01_tokens [FROM=folder | ZIP=lms.zip] [ARGS="--force --student jdoe"]
.PHONY: feedback report
grade: $(STAMP)  ## autograde assignment A (collect FROM=folder or ZIP=lms.zip first when given)
	$(BIN)/python -m coursetools.cli grade $(A) $(if $(FROM),--from $(FROM)) $(if $(ZIP),--zip $(ZIP)) $(ARGS)

feedback: $(STAMP)  ## feedback HTML for assignment A, without hidden tests
	$(BIN)/python -m coursetools.cli feedback $(A)

report: $(STAMP)  ## CSV exports and the class report for assignment A
	$(BIN)/python -m coursetools.cli report $(A)
