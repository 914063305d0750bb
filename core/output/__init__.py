"""What people take away: node files, exported scripts, the HTML snapshot, the highlighted source, docs/reference.md."""
