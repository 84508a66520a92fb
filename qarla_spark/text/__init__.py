"""text: see issue 3 (the similarity battery); filled in by the next commits."""
