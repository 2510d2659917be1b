"""Sections: each module reads the run record's events and builds one section of the report (steps,
loaders, system, copies, devices ...). Pure functions of the record."""
