"""What tests share that is not a fixture: builders, drivers, fake servers, constants. Fixtures reach tests through
the conftest files, which import the fixture functions some of these modules define."""
