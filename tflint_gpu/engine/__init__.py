"""How a file becomes findings: model walk, names, graph contexts, tensors, rules, fixes."""
