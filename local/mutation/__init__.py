"""Mutation testing of the layer with mutmut: one mutmut run per module, with the tests that module needs.

`make mutation [MODULES="svcconf/codes.py ..."]` runs all of shared/svcconf/ or the named modules and prints a
report per module; `make mutation-gate` (part of `make test`) runs the modules of modules.toml's [gate] and fails
on a surviving mutant that baseline.toml does not name; `make mutation-baseline` rewrites baseline.toml from a
gate run, keeping the reasons already given. docs/12-mutation-testing.md says how to read and extend them.
"""
