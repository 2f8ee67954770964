"""Everything a person or a file gives the suite, checked: numbers, sizes, option types, the strict YAML
reader, and the one-line errors that refuse bad input (exit 2)."""
