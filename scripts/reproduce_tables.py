"""FActScore's Tables 1, 3 and 9 on the dev split, with the embedded CPU models: the entry
point of ``scripts/tables/``, whose package docstring says what each section measures
(``--help`` prints it)."""

from scripts.tables.cli import main

if __name__ == "__main__":
    main()
