"""Reports (untrusted, print only): the offline HTML proof browser, LaTeX and MathML,
certificate tables and notebook display."""
