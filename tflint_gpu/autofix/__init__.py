"""Helpers shared by the rules' fixes: dtype maps, building TF calls in the file's spelling."""
