"""Everything a person or a file gives the suite, checked: numbers, sizes, option types, the strict YAML
reader, the CSV cells read from a person's file (and the one CSV writer, which holds the same rule for a
cell a spreadsheet would run), and the one-line errors that refuse bad input (exit 2)."""
