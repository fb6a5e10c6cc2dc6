import { expect, test } from 'bun:test'
import { bufferedLog } from '../../src/http/buffered-log'

test('log lines are written in blocks: by size, after a short wait, and on flush', async () => {
  const blocks: string[] = []
  const log = bufferedLog((block) => blocks.push(block), 20, 30)
  log('a'.repeat(10))
  log('b'.repeat(10))
  expect(blocks).toEqual([])
  log('c'.repeat(10))
  expect(blocks).toEqual([`${'a'.repeat(10)}\n${'b'.repeat(10)}\n${'c'.repeat(10)}\n`])
  log('late')
  await Bun.sleep(40)
  expect(blocks.at(-1)).toBe('late\n')
  log('last')
  log.flush()
  expect(blocks.at(-1)).toBe('last\n')
  log.flush()
  expect(blocks).toHaveLength(3)
})
