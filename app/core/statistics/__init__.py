"""Statistics of samples: `stats` summarises one metric (median, its interval, outliers);
`stability_warnings` says why a figure may not be trustworthy, and the fix. Pure numbers:
the measuring children, the records and the faces all use them."""
