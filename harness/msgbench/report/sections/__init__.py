"""The report's sections, one module per family; each turns results into model blocks."""
