from tcdist.cli import main

raise SystemExit(main())
