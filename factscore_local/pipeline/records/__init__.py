"""What goes in and comes out: input bios, FActScore's labeled format, the output rows and
the run record."""
