import { describe, expect, it } from 'vitest';
import { run, seen, start } from './helpers.js';

describe('card put against a server answering 201 Created', () => {
  it('sends typed values and prints the new _id alone', async () => {
    const s = await start();
    const r = await run(s, ['card', 'put', 'Title=Fix login', 'Due Date=2024-05-01', 'Estimate:=3', 'Tags:=["a","b"]', 'Status:=null']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(s.cards).toHaveLength(1);
    expect(r.stdout).toBe(`${s.cards[0]!._id}\n`);
    const post = seen(s, 'POST')[0]!;
    expect(post.status).toBe(201);
    expect(post.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post.body)).toEqual({ Title: 'Fix login', 'Due Date': '2024-05-01', Estimate: 3, Tags: ['a', 'b'], Status: null });
  });

  it('--json prints the whole card, extra keys included', async () => {
    const s = await start({ idStyle: 'numeric' });
    const r = await run(s, ['card', 'put', 'Title=x', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ _id: '00001', createdAt: expect.any(String), boardId: 'board-7', Title: 'x' });
  });

  it('a mis-cased key is refused with exit 2 and no POST reaches the server', async () => {
    const s = await start();
    const r = await run(s, ['card', 'put', 'Title=x', 'due date=2024-05-01']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'due date' (did you mean 'Due Date'?)");
    expect(r.stdout).toBe('');
    expect(seen(s, 'POST')).toEqual([]);
    expect(s.cards).toEqual([]);
  });

  for (const idStyle of ['uuid', 'numeric', 'odd'] as const) {
    it(`--id updates a card with a ${idStyle} id (200) without a "new card" warning`, async () => {
      const s = await start({ idStyle });
      const [id] = s.seed(2);
      const r = await run(s, ['card', 'put', '--id', id!, 'Status=Done']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${id}\n`);
      expect(r.stderr).toBe('');
      expect(s.cards).toHaveLength(2);
      expect(s.cards[0]).toMatchObject({ _id: id, Status: 'Done', Title: 'Card 1' });
      expect(JSON.parse(seen(s, 'POST')[0]!.body)).toEqual({ Status: 'Done', _id: id });
    });
  }

  it('--id on an "Always Create New" board: a 201 with another id is reported on stderr, exit 5', async () => {
    const s = await start({ updateMode: 'Always Create New', idStyle: 'numeric' });
    s.seed(1);
    const r = await run(s, ['card', 'put', '--id', '00001', 'Status=Done']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stdout).toBe('00002\n');
    expect(r.stderr).toContain('created a new card (00002) instead of updating 00001');
  });
});

describe('comment against a server answering 201 Created', () => {
  for (const idStyle of ['uuid', 'numeric', 'odd'] as const) {
    it(`posts on a card with a ${idStyle} id and prints the comment id`, async () => {
      const s = await start({ idStyle });
      const [id] = s.seed(1);
      const r = await run(s, ['comment', id!, 'Deployed', 'to', 'staging']);
      expect(r.code, r.stderr).toBe(0);
      expect(s.comments).toHaveLength(1);
      expect(s.comments[0]!.cardId).toBe(id);
      expect(s.comments[0]!.comment.content).toBe('Deployed to staging');
      expect(r.stdout).toBe(`${s.comments[0]!.comment.id}\n`);
      const post = seen(s, 'POST')[0]!;
      expect(post.status).toBe(201);
      expect(post.url).toBe(`/api/card/${encodeURIComponent(id!)}/comment`);
    });
  }

  it('--json prints the Comment', async () => {
    const s = await start();
    const [id] = s.seed(1);
    const r = await run(s, ['comment', id!, '-', '--json'], { input: 'from stdin\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.comments[0]!.comment);
  });
});
