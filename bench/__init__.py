"""Benchmarks that print figures (`make bench`); none of them asserts, the numbers are for people."""
