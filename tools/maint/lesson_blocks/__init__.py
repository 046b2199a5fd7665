"""The generated blocks of the lessons (tools/maint/update_results.py writes them,
tools/maint/check_lessons.py checks them), by what they do:

  results     reading docs/results' benchmark files and the rubric's TOML
  text        numbers in words and the reflow of a block's paragraphs to the lessons' width
  references  the rows of the reference solutions a lab's grade is read from, and the bar
  course      Course: everything a block may read, and the template language's functions
  graded      the 'graded' block: what tools/grade demands of a lab
  tables      the 'measured', 'harris', 'strategies' and 'strategies-now' tables

The course map (README.md) stays in update_results.py with its words (COURSE_MAP), where the
README says they are.
"""
